"""English words and sentences as datatrove 0.10.1 splits them with spaCy's blank English pipeline, without spaCy.

spaCy's tokenizer, as documented on spacy.io ("How spaCy's tokenizer works"): the text is cut into runs of
whitespace and non-whitespace; each non-whitespace chunk is a special case, or loses prefixes and suffixes
until a special case or nothing is left, then the rest is a URL, a special case or is cut at infixes; a
special case whose text the affix rules split is restored afterwards when its pieces stand side by side.
A whitespace run between two chunks becomes a token unless it is one plain space (its first space belongs to
the token before). The sentencizer starts a sentence at the first token after a sentence-final character
(``SENTENCE_END``) that is not punctuation itself. The rule tables were measured from spaCy
(``english_tables.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain

from pipeline.filter import english_tables as T

_PREFIX = re.compile(r"(?:\.\.+|US\$|C\$|A\$|\+(?![0-9])|[" + T.PREFIX_CHARS + "])")
_INFIX = re.compile(
    r"\.\.+|…|[" + T.ICONS + r"]|(?<=[0-9])[+\-\*^](?=[0-9-])"
    + "|(?<=[" + T.LOWER + T.QUOTES + r"])\.(?=[" + T.UPPER + T.QUOTES + "])"
    + "|(?<=[" + T.ALPHA + "]),(?=[" + T.ALPHA + "])"
    + "|(?<=[" + T.ALPHA + "0-9])(?:-|–|—|--|---|——|~)(?=[" + T.ALPHA + "])"
    + "|(?<=[" + T.ALPHA + "0-9])[:<>=/](?=[" + T.ALPHA + "])"
)  # fmt: skip
_INFIX_CHAR = re.compile(r"[.…+\-*^,–—~:<>=/" + T.ICONS + "]")  # a character every infix rule needs


def _expand(ranges: str) -> frozenset[str]:
    """The characters of a class body made of ``\\uXXXX`` escapes and ranges."""
    out: set[str] = set()
    for first, last in re.findall(r"\\[uU]([0-9a-fA-F]+)(?:-\\[uU]([0-9a-fA-F]+))?", ranges):
        out.update(map(chr, range(int(first, 16), int(last or first, 16) + 1)))
    return frozenset(out)


# the last character of any suffix: a suffix character, a dot, 's / 'S, a plus, or ends a currency or unit
_AFTER_DIGIT = [re.sub(r"\\(.)", r"\1", x) for x in (*T.CURRENCY, *T.UNITS)]  # unescaped
_SUFFIX_LAST = _expand(T.SUFFIX_CHARS) | {".", "s", "S", "+"} | {x[-1] for x in _AFTER_DIGIT}
_AFTER_DIGIT_BY_LAST: dict[str, list[str]] = {}
for _tail in sorted(set(_AFTER_DIGIT), key=len, reverse=True):
    _AFTER_DIGIT_BY_LAST.setdefault(_tail[-1], []).append(_tail)
_SUFFIX_ONE = _expand(T.SUFFIX_CHARS)
_SUFFIX_TWO = frozenset({"'s", "'S", "’s", "’S", "……"})
_DOT_AFTER = re.compile("[" + T.DOT_AFTER + "]")  # classes of about 10^5 characters: matched, not expanded
_UPPER2 = re.compile("[" + T.UPPER + "]{2}")
_DIGITS = frozenset("0123456789")
_PREFIX_FIRST = _expand(T.PREFIX_CHARS) | {".", "U", "C", "A", "+"}
_OCTET = r"(?:1?\d{1,2}|2[0-4]\d|25[0-5])"
_HOST_CHAR = "A-Za-z0-9\u00a1-\uffff"
_URL = re.compile(
    r"(?u)^(?:[\w+\-.]{2,}://)?"  # scheme
    r"(?:\S+(?::\S*)?@)?"  # user[:password]@
    r"(?:"
    r"(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})"
    r"(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})"  # no private or loopback address
    rf"(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.{_OCTET}){{2}}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))"
    rf"|(?:(?:[{_HOST_CHAR}][{_HOST_CHAR}_-]{{0,62}})?[{_HOST_CHAR}]\.)+(?:[{T.LOWER}]{{2,63}})"  # host.tld
    r")(?::\d{2,5})?(?:[/?#]\S*)?$"
)
_SPECIALS: dict[str, tuple[str, ...]] = {c: (c,) for c in T.SPECIAL_SPACES}
_SPECIALS.update({"".join(parts): tuple(parts) for parts in map(str.split, T.SPECIALS)})
_SENTENCE_END = frozenset(T.SENTENCE_END)
_HAS_SENTENCE_END = re.compile("[" + re.escape(T.SENTENCE_END) + "]")
_PIECES = re.compile(r"\s+|\S+")
_GAPS = re.compile(r"(\s+)")
_CACHE: dict[str, tuple[str, ...]] = {}
_CACHE_LIMIT = 500_000
_REJOINED: dict[str, tuple[str, ...]] = {}  # chunk -> its pieces, when a special case was rejoined inside it


def _is_punct(token: str) -> bool:
    """spaCy's ``is_punct``: every character is in a Unicode punctuation category (P*)."""
    return all(unicodedata.category(c)[0] == "P" for c in token)


def _suffix_length(s: str) -> int:
    """Length of the suffix spaCy's suffix search finds, or 0. Every rule is anchored at the end, so its
    leftmost match is the longest rule that matches: one character of a class, a dot after a letter or
    digit (or two capitals, or a temperature), ``'s``, a run of dots, or a unit or currency after a digit."""
    n = len(s)
    if not n or s[-1] not in _SUFFIX_LAST:
        return 0
    if s.endswith(".."):
        return n - len(s.rstrip("."))
    best = 0
    last = s[-1]
    if last in _SUFFIX_ONE:
        best = 1
    elif last == ".":
        before = s[-2:-1]
        if before and (
            _DOT_AFTER.match(before)
            or (n >= 3 and _UPPER2.match(s, n - 3))
            or (n >= 3 and s[-3] == "°" and before in "FfCcKk")
        ):
            best = 1
    elif last == "+" and n >= 2 and s[-2] in _DIGITS:
        best = 1
    if n >= 2 and s[-2:] in _SUFFIX_TWO:
        best = 2
    for tail in _AFTER_DIGIT_BY_LAST.get(last, ()):  # longest first
        k = len(tail)
        if k <= best:
            break
        if n > k and s.endswith(tail) and s[-k - 1] in _DIGITS:
            best = k
            break
    return best


def _affixes(chunk: str, specials: bool) -> list[str]:
    """Tokens of one whitespace-free chunk by the prefix / suffix / URL / infix rules."""
    prefixes: list[str] = []
    suffixes: list[str] = []
    s = chunk
    last = -1
    stop = False
    while s and len(s) != last and not stop:
        if specials and s in _SPECIALS:
            break
        last = len(s)
        m = _PREFIX.match(s) if s[0] in _PREFIX_FIRST else None
        pre = m.end() if m else 0
        if pre and specials and s[pre:] in _SPECIALS:
            prefixes.append(s[:pre])
            s = s[pre:]
            break
        suf = _suffix_length(s[pre:])
        if suf and specials and s[: len(s) - suf] and s[: len(s) - suf] in _SPECIALS:
            suffixes.append(s[len(s) - suf :])
            s = s[: len(s) - suf]
            break
        if pre and suf and pre + suf <= len(s):
            prefixes.append(s[:pre])
            suffixes.append(s[len(s) - suf :])
            s = s[pre : len(s) - suf]
        elif pre:
            prefixes.append(s[:pre])
            s = s[pre:]
        elif suf:
            suffixes.append(s[len(s) - suf :])
            s = s[: len(s) - suf]
        stop = bool(s) and s in _SPECIALS
    out: list[str] = []
    for p in prefixes:
        out.extend(_SPECIALS.get(p, (p,)) if specials else (p,))
    if s:
        if specials and s in _SPECIALS:
            out.extend(_SPECIALS[s])
        elif "." in s and _URL.match(s):  # a URL has a dot before its TLD or in its IP address
            out.append(s)
        else:
            start = 0
            for m in _INFIX.finditer(s) if _INFIX_CHAR.search(s) else ():
                if m.start() == 0:
                    continue
                if m.start() != start:
                    out.append(s[start : m.start()])
                if m.start() != m.end():
                    out.append(m.group())
                start = m.end()
            if s[start:]:
                out.append(s[start:])
    for p in reversed(suffixes):
        out.extend(_SPECIALS.get(p, (p,)) if specials else (p,))
    return out


def _matcher_table() -> dict[tuple[str, ...], str]:
    """Special cases the affix rules split, keyed by the pieces they are split into."""
    table: dict[tuple[str, ...], str] = {}
    for text in _SPECIALS:
        pieces = tuple(_affixes(text, specials=False))
        if len(pieces) > 1:
            table.setdefault(pieces, text)
    return table


_MATCHER = _matcher_table()
_MATCHER_LENGTHS = sorted({len(k) for k in _MATCHER}, reverse=True)
_MATCHER_FIRST = frozenset(k[0] for k in _MATCHER)
_PAIRS = frozenset(pair for k in _MATCHER for pair in zip(k, k[1:], strict=False))  # side by side in one


def _special_matches(tokens: list[str], groups: list[int] | None = None) -> list[tuple[int, int]]:
    """Spans of side-by-side pieces of a special case to rejoin. Matches are taken longest first, then
    leftmost; one is dropped when its first or last token lies in a match taken before it, kept or dropped
    (spaCy's outcome). With ``groups`` (the chunk of each token), a match across chunks takes part but is
    never rejoined."""
    matches: list[tuple[int, int]] = []
    for i, tok in enumerate(tokens):
        if tok in _MATCHER_FIRST:
            for n in _MATCHER_LENGTHS:
                if i + n <= len(tokens) and tuple(tokens[i : i + n]) in _MATCHER:
                    matches.append((i, i + n))
    seen: set[int] = set()
    kept: list[tuple[int, int]] = []
    for start, end in sorted(matches, key=lambda m: (m[0] - m[1], m[0])):
        if start not in seen and end - 1 not in seen and (groups is None or groups[start] == groups[end - 1]):
            kept.append((start, end))
        seen.update(range(start, end))
    return sorted(kept)


def _rejoin(tokens: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """``tokens`` with each span replaced by its special case's tokens."""
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.extend(tokens[pos:start])
        out.extend(_SPECIALS[_MATCHER[tuple(tokens[start:end])]])
        pos = end
    out.extend(tokens[pos:])
    return out


def _restore_specials(tokens: list[str]) -> list[str]:
    """Rejoin the special cases split inside one chunk."""
    spans = _special_matches(tokens)
    return _rejoin(tokens, spans) if spans else tokens


# A word of letters between single-character prefixes and suffixes ("(word", "word),"): each affix character
# is a token, unless a special case contains the word with some of them (then the full rules run).
_SIMPLE = re.compile("([" + T.PREFIX_CHARS + r"]*)(\w+)([" + T.SUFFIX_CHARS.replace(r"\u2026", "") + r"]*)\Z")
_SPECIAL_CORES = frozenset(
    m.group(2) for text in _SPECIALS if (m := _SIMPLE.match(text)) and (m.group(1) or m.group(3))
)
assert all(_SPECIALS[c] == (c,) for c in _SPECIALS if len(c) == 1), "a one-character special case splits"


def _simple(chunk: str) -> list[str] | None:
    """The tokens of a word of letters between affix characters, or None for any other chunk."""
    m = _SIMPLE.match(chunk)
    if m is None:
        return None
    pre, word, suf = m.groups()
    if not word.isalpha() or word in _SPECIAL_CORES:
        return None
    return [*pre, *_SPECIALS.get(word, (word,)), *suf]


def chunk_tokens(chunk: str) -> tuple[str, ...]:
    """spaCy's tokens of one whitespace-free chunk (cached)."""
    hit = _CACHE.get(chunk)
    if hit is not None:
        return hit
    if len(_CACHE) >= _CACHE_LIMIT:  # both tables start over together
        _CACHE.clear()
        _REJOINED.clear()
    if chunk in _SPECIALS:
        tokens: tuple[str, ...] = _SPECIALS[chunk]
    elif chunk.isalpha():  # no affix or infix rule involves a letter alone (tests/test_filter_words.py)
        tokens = (chunk,)
    else:
        pieces = _simple(chunk) or _affixes(chunk, specials=True)
        tokens = tuple(_restore_specials(pieces) if len(pieces) > 1 else pieces)
        if tokens != tuple(pieces):
            _REJOINED[chunk] = tuple(pieces)
    _CACHE[chunk] = tokens
    return tokens


def _straddled(chunks: list[str], tokens: list[tuple[str, ...]]) -> bool:
    """Whether a special case's pieces could straddle the gap next to a chunk with a rejoined special case: the
    last piece before the gap and the first after it stand side by side in some special case. Only such a match
    (across one plain space) can keep one inside the chunk from being rejoined; any gap is tested here, so a
    true answer may still find nothing to change."""
    hits = _REJOINED.keys() & chunks
    last = len(chunks) - 1
    for i in [i for i, chunk in enumerate(chunks) if chunk in hits]:
        pieces = _REJOINED[chunks[i]]
        if i > 0 and ((_REJOINED.get(chunks[i - 1]) or tokens[i - 1])[-1], pieces[0]) in _PAIRS:
            return True
        if i < last and (pieces[-1], (_REJOINED.get(chunks[i + 1]) or tokens[i + 1])[0]) in _PAIRS:
            return True
    return False


def _lookup(chunks: list[str]) -> list[tuple[str, ...]]:
    """The cached tokens of every chunk, the missing ones made first (one pass over the distinct misses)."""
    get = _CACHE.get
    tokens = list(map(get, chunks))
    if None not in tokens:
        return tokens  # type: ignore[return-value]  # no None: every chunk was cached
    missing = set(chunks).difference(_CACHE)
    if len(_CACHE) + len(missing) > _CACHE_LIMIT:  # start over now, not in the middle of this text
        _CACHE.clear()
        _REJOINED.clear()
        missing = set(chunks)
    made = {chunk: chunk_tokens(chunk) for chunk in missing}
    return [get(c) or made[c] for c in chunks]


def _doc_tokens(text: str, chunks: list[str]) -> tuple[list[tuple[str, ...]], bool]:
    """Tokens of each chunk of ``text``, and whether a neighbour changed some. spaCy matches special cases over
    the whole text: a match across chunks (only a plain space between) is never rejoined but can keep one
    inside a chunk from being rejoined. A whitespace token never joins a match, so each run of chunks with
    plain spaces between is matched on its own, when it holds a rejoined special case and a boundary where
    one could straddle."""
    tokens = _lookup(chunks)
    if _REJOINED.keys().isdisjoint(chunks):
        return tokens, False
    if not _straddled(chunks, tokens):
        return tokens, False
    rejoined = [i for i, chunk in enumerate(chunks) if chunk in _REJOINED]
    parts = _GAPS.split(text)
    if parts[0] == "":  # leading whitespace: a token of its own, never part of a match
        parts = parts[2:]
    gaps = parts[1::2]  # gaps[i] lies between chunks i and i + 1
    changed = False
    done = -1
    for i in rejoined:
        if i <= done:
            continue
        first, last = i, i
        while first > 0 and gaps[first - 1] == " ":
            first -= 1
        while last + 1 < len(chunks) and gaps[last] == " ":
            last += 1
        done = last
        if first == last:
            continue
        changed |= _rematch(chunks, tokens, range(first, last + 1))
    return tokens, changed


def _rematch(chunks: list[str], tokens: list[tuple[str, ...]], run: range) -> bool:
    """Match special cases over a run of chunks with plain spaces between; update their tokens in place."""
    seq: list[str] = []
    groups: list[int] = []
    for i in run:
        pieces = _REJOINED.get(chunks[i]) or tokens[i]
        seq.extend(pieces)
        groups.extend([i] * len(pieces))
    new: dict[int, list[str]] = {i: [] for i in run}
    pos = 0
    for start, end in [*_special_matches(seq, groups), (len(seq), len(seq))]:
        for k in range(pos, start):
            new[groups[k]].append(seq[k])
        if start < len(seq):
            new[groups[start]].extend(_SPECIALS[_MATCHER[tuple(seq[start:end])]])
        pos = end
    changed = False
    for i in run:
        if tuple(new[i]) != tokens[i]:
            tokens[i] = tuple(new[i])
            changed = True
    return changed


_shared: dict[str, list[str]] | None = None  # text -> its words, inside ``shared_splits``
_SHARED_WORDS = 4_000_000  # words the memo holds at most (it stops adding beyond)
_shared_size = 0


@contextmanager
def shared_splits() -> Iterator[None]:
    """Within the block ``split_words`` and ``count_words`` split each distinct text once: several filters of a
    stage that read the same batch share one split per text. The memo is dropped when the outermost block ends."""
    global _shared, _shared_size
    if _shared is not None:
        yield
        return
    _shared, _shared_size = {}, 0
    try:
        yield
    finally:
        _shared, _shared_size = None, 0


def _words(text: str) -> list[str]:
    """The words of ``text`` (from the memo inside ``shared_splits``; never to be changed by the caller)."""
    global _shared_size
    memo = _shared
    if memo is None:
        return list(chain.from_iterable(_doc_tokens(text, text.split())[0]))
    found = memo.get(text)
    if found is None:
        found = list(chain.from_iterable(_doc_tokens(text, text.split())[0]))
        if _shared_size + len(found) <= _SHARED_WORDS:
            memo[text] = found
            _shared_size += len(found)
    return found


def split_words(text: str) -> list[str]:
    """``datatrove.utils.text.split_into_words(text, "en")``: spaCy's non-whitespace tokens."""
    words = _words(text)
    return words if _shared is None else list(words)


def count_words(text: str) -> int:
    """``len(split_words(text))`` without building the list."""
    if _shared is None:
        return sum(map(len, _doc_tokens(text, text.split())[0]))
    return len(_words(text))


_END_CHUNK = re.compile(r"(?<!\S)\S*[" + re.escape(T.SENTENCE_END) + r"]\S*")
_NEXT_CHUNK = re.compile(r"(\s*)(\S+)")


def split_sentences(text: str) -> list[str]:
    """``datatrove.utils.text.split_into_sentences(text, "en")``: the text cut after each sentence's last
    token, so whitespace between sentences opens the next one and the pieces join back into ``text``."""
    chunks = text.split()
    tokens, changed = _doc_tokens(text, chunks)
    if changed:
        return _split_sentences_by_index(text, tokens)
    cuts: list[int] = []
    seen_end = False  # a sentence-final token was seen and no sentence has started since
    prev_end = 0  # end of the last non-whitespace token
    pos = 0
    while True:
        if not seen_end:  # jump to the next chunk holding a sentence-final character
            m = _END_CHUNK.search(text, pos)
            if m is None:
                break
            start, chunk = m.start(), m.group()
        else:
            m = _NEXT_CHUNK.match(text, pos)
            if m is None:
                if text[pos:] and text[pos:] != " ":  # trailing whitespace token
                    cuts.append(prev_end)
                break
            gap = m.group(1)
            if gap and gap != " ":  # a whitespace token starts the sentence
                cuts.append(prev_end)
                seen_end = False
                pos = m.start(2)
                continue
            start, chunk = m.start(2), m.group(2)
        at = start
        for tok in _CACHE.get(chunk) or chunk_tokens(chunk):
            in_end = tok in _SENTENCE_END
            if seen_end and not in_end and not _is_punct(tok):
                cuts.append(prev_end)
                seen_end = False
            elif in_end:
                seen_end = True
            at += len(tok)
            prev_end = at
        pos = start + len(chunk)
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def _split_sentences_by_index(text: str, tokens: list[tuple[str, ...]]) -> list[str]:
    """``split_sentences`` token by token, for a text whose chunks' tokens depend on their neighbours."""
    cuts: list[int] = []
    seen_end = False
    prev_end = 0  # end of the last non-whitespace token
    index = -1
    for m in _PIECES.finditer(text):
        piece = m.group()
        if piece[0].isspace():
            if seen_end and piece != " ":  # a whitespace token: all of the run but a leading plain space
                cuts.append(prev_end)
                seen_end = False
            continue
        index += 1
        if not seen_end and not _HAS_SENTENCE_END.search(piece):
            prev_end = m.end()
            continue
        pos = m.start()
        for tok in tokens[index]:
            in_end = tok in _SENTENCE_END
            if seen_end and not in_end and not _is_punct(tok):
                cuts.append(prev_end)
                seen_end = False
            elif in_end:
                seen_end = True
            pos += len(tok)
            prev_end = pos
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
