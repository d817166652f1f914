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
import sys
import unicodedata
from itertools import chain

from pipeline.filter import english_tables as T

_PREFIX = re.compile(r"(?:\.\.+|US\$|C\$|A\$|\+(?![0-9])|[" + T.PREFIX_CHARS + "])")
_SUFFIX = re.compile(
    r"(?:\.\.+|'s|'S|’s|’S|(?<=[0-9])\+|(?<=°[FfCcKk])\."
    + r"|(?<=[0-9])(?:" + "|".join(T.CURRENCY) + ")"
    + r"|(?<=[0-9])(?:" + "|".join(T.UNITS) + ")"
    + r"|(?<=[" + T.DOT_AFTER + r"])\.|(?<=[" + T.UPPER + "][" + T.UPPER + r"])\."
    + "|[" + T.SUFFIX_CHARS + "])$"
)  # fmt: skip
_INFIX = re.compile(
    r"\.\.+|…|[" + T.ICONS + r"]|(?<=[0-9])[+\-\*^](?=[0-9-])"
    + "|(?<=[" + T.LOWER + T.QUOTES + r"])\.(?=[" + T.UPPER + T.QUOTES + "])"
    + "|(?<=[" + T.ALPHA + "]),(?=[" + T.ALPHA + "])"
    + "|(?<=[" + T.ALPHA + "0-9])(?:-|–|—|--|---|——|~)(?=[" + T.ALPHA + "])"
    + "|(?<=[" + T.ALPHA + "0-9])[:<>=/](?=[" + T.ALPHA + "])"
)  # fmt: skip
_SUFFIX_WINDOW = 2 + max(len(re.sub(r"\\(.)", r"\1", x)) for x in (*T.CURRENCY, *T.UNITS))
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
_PUNCT = re.compile(
    "["
    + "".join(re.escape(chr(cp)) for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)).startswith("P"))
    + "]+"
)
_PIECES = re.compile(r"\s+|\S+")
_CACHE: dict[str, tuple[str, ...]] = {}
_CACHE_LIMIT = 500_000


def _suffix_length(s: str) -> int:
    """Length of the suffix spaCy's suffix search finds (its leftmost match ending at the end), or 0."""
    if s.endswith(".."):
        return len(s) - len(s.rstrip("."))  # no other rule reaches past a run of dots
    m = _SUFFIX.search(s, max(0, len(s) - _SUFFIX_WINDOW))  # lookbehinds still see the whole string
    return len(s) - m.start() if m else 0


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
        m = _PREFIX.match(s)
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
            for m in _INFIX.finditer(s):
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


def _restore_specials(tokens: list[str]) -> list[str]:
    """Rejoin side-by-side pieces of a special case; an overlap with an earlier match suppresses a match."""
    matches: list[tuple[int, int]] = []
    for i, tok in enumerate(tokens):
        if tok in _MATCHER_FIRST:
            for n in _MATCHER_LENGTHS:
                if i + n <= len(tokens) and tuple(tokens[i : i + n]) in _MATCHER:
                    matches.append((i, i + n))
    if not matches:
        return tokens
    out: list[str] = []
    reach = 0
    pos = 0
    for start, end in matches:  # by start, longest first
        if start >= reach:
            out.extend(tokens[pos:start])
            out.extend(_SPECIALS[_MATCHER[tuple(tokens[start:end])]])
            pos = end
        reach = max(reach, end)
    out.extend(tokens[pos:])
    return out


def chunk_tokens(chunk: str) -> tuple[str, ...]:
    """spaCy's tokens of one whitespace-free chunk (cached)."""
    hit = _CACHE.get(chunk)
    if hit is not None:
        return hit
    if chunk in _SPECIALS:
        tokens: tuple[str, ...] = _SPECIALS[chunk]
    elif chunk.isalpha():  # no affix or infix rule involves a letter alone (tests/test_filter_words.py)
        tokens = (chunk,)
    else:
        pieces = _affixes(chunk, specials=True)
        tokens = tuple(_restore_specials(pieces) if len(pieces) > 1 else pieces)
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[chunk] = tokens
    return tokens


def split_words(text: str) -> list[str]:
    """``datatrove.utils.text.split_into_words(text, "en")``: spaCy's non-whitespace tokens."""
    get = _CACHE.get
    return list(chain.from_iterable([get(c) or chunk_tokens(c) for c in text.split()]))


def count_words(text: str) -> int:
    """``len(split_words(text))`` without building the list."""
    get = _CACHE.get
    return sum(len(get(c) or chunk_tokens(c)) for c in text.split())


def split_sentences(text: str) -> list[str]:
    """``datatrove.utils.text.split_into_sentences(text, "en")``: the text cut after each sentence's last
    token, so whitespace between sentences opens the next one and the pieces join back into ``text``."""
    cuts: list[int] = []
    seen_end = False
    prev_end = 0  # end of the last non-whitespace token
    for m in _PIECES.finditer(text):
        piece = m.group()
        if piece[0].isspace():
            if seen_end and piece != " ":  # a whitespace token: all of the run but a leading plain space
                cuts.append(prev_end)
                seen_end = False
            continue
        if not seen_end and not _HAS_SENTENCE_END.search(piece):
            prev_end = m.end()
            continue
        pos = m.start()
        for tok in chunk_tokens(piece):
            in_end = tok in _SENTENCE_END
            if seen_end and not in_end and not _PUNCT.fullmatch(tok):
                cuts.append(prev_end)
                seen_end = False
            elif in_end:
                seen_end = True
            pos += len(tok)
            prev_end = pos
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
