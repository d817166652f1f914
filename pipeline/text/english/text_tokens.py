"""spaCy's tokens of every chunk of one text: the cached tokens of each chunk, corrected where a special case's
pieces could straddle the plain space between two chunks (spaCy matches special cases over the whole text)."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from itertools import chain, compress, count
from operator import not_

from pipeline.text.english.chunk_cache import CACHE, REJOINED, lookup
from pipeline.text.english.spacy_affixes import SPECIALS
from pipeline.text.english.spacy_special_cases import MATCHER, PAIRS, candidate_matches, special_matches

_GAPS = re.compile(r"(\s+)")


def positions(chunks: list[str], hits: AbstractSet[str]) -> list[int]:
    """The positions (ascending) of the chunks in ``hits``: a scan of the list in C per distinct hit while they are
    few."""
    if len(hits) > 4:
        return [i for i, chunk in enumerate(chunks) if chunk in hits]
    found: list[int] = []
    for hit in hits:
        i = -1
        try:
            while True:
                i = chunks.index(hit, i + 1)
                found.append(i)
        except ValueError:  # no more
            pass
    return sorted(found)


def _straddled(chunks: list[str], tokens: list[tuple[str, ...]], hits: set[str]) -> bool:
    """Whether a special case's pieces could straddle the gap next to a chunk with a rejoined special case: the
    last piece before the gap and the first after it stand side by side in some special case. Only such a match
    (across one plain space) can keep one inside the chunk from being rejoined; any gap is tested here, so a
    true answer may still find nothing to change. ``hits``: the chunks of the text in REJOINED."""
    last = len(chunks) - 1
    for i in positions(chunks, hits):
        pieces = REJOINED[chunks[i]]
        if i > 0 and ((REJOINED.get(chunks[i - 1]) or tokens[i - 1])[-1], pieces[0]) in PAIRS:
            return True
        if i < last and (pieces[-1], (REJOINED.get(chunks[i + 1]) or tokens[i + 1])[0]) in PAIRS:
            return True
    return False


def doc_tokens(text: str, chunks: list[str]) -> tuple[list[tuple[str, ...]], bool]:
    """Tokens of each chunk of ``text``, and whether a neighbour changed some. spaCy matches special cases over
    the whole text: a match across chunks (only a plain space between) is never rejoined but can keep one
    inside a chunk from being rejoined. A whitespace token never joins a match, so each run of chunks with
    plain spaces between is matched on its own, when it holds a rejoined special case and a boundary where
    one could straddle."""
    tokens = lookup(chunks)
    hits = REJOINED.keys() & chunks
    if not hits or not _straddled(chunks, tokens, hits):
        return tokens, False
    rejoined = positions(chunks, hits)
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
        pieces = REJOINED.get(chunks[i]) or tokens[i]
        seq.extend(pieces)
        groups.extend([i] * len(pieces))
    new: dict[int, list[str]] = {i: [] for i in run}
    pos = 0
    for start, end in [*special_matches(seq, groups), (len(seq), len(seq))]:
        for k in range(pos, start):
            new[groups[k]].append(seq[k])
        if start < len(seq):
            new[groups[start]].extend(SPECIALS[MATCHER[tuple(seq[start:end])]])
        pos = end
    changed = False
    for i in run:
        if tuple(new[i]) != tokens[i]:
            tokens[i] = tuple(new[i])
            changed = True
    return changed


_ALPHA_SPECIALS = frozenset(c for c in SPECIALS if c.isalpha() and len(SPECIALS[c]) > 1)  # letters, split


def _tokens_of(chunk: str) -> tuple[str, ...]:
    """The tokens a chunk stands for beside a gap (rejoined or not), once :func:`lookup` has seen every chunk of
    the text that holds a character other than a letter; a word of letters is its own token or a special case."""
    return REJOINED.get(chunk) or CACHE.get(chunk) or SPECIALS.get(chunk) or (chunk,)


def text_words(text: str) -> list[str]:
    """``list(chain.from_iterable(doc_tokens(text, text.split())[0]))``: the words of ``text``. A chunk of letters
    that is no special case is one word (``chunk_cache._make``), so only the other chunks are looked up and their
    tokens spliced in; a text where a rejoined special case could straddle a gap takes :func:`doc_tokens`."""
    chunks = text.split()
    at = list(compress(count(), map(not_, map(str.isalpha, chunks))))  # chunks holding some non-letter
    specials = _ALPHA_SPECIALS.intersection(chunks)
    if specials:
        at = sorted({*at, *positions(chunks, specials)})
    if not at:
        return chunks
    odd = list(map(chunks.__getitem__, at))
    tokens = lookup(odd)
    if not REJOINED.keys().isdisjoint(odd) and _straddled_at(chunks, at, odd, REJOINED.keys() & odd):
        return list(chain.from_iterable(doc_tokens(text, chunks)[0]))
    out: list[str] = []
    pos = 0
    for i, pieces in zip(at, tokens, strict=True):
        if len(pieces) > 1:  # one token is the chunk itself
            out += chunks[pos:i]
            out += pieces
            pos = i + 1
    if not pos:
        return chunks
    out += chunks[pos:]
    return out


_REACH = max(map(len, MATCHER)) - 1  # chunks a match overlapping one chunk can reach on either side


def _straddled_at(chunks: list[str], at: list[int], odd: list[str], hits: set[str]) -> bool:
    """Whether a rejoined special case of the text may be kept from being rejoined by a match across a gap: its
    chunk and a neighbour hold side-by-side pieces of a special case (:func:`_straddled`), and some special case's
    pieces stand side by side across a gap, overlapping the chunk's pieces (:func:`_crossed`). ``odd``: the chunks
    at ``at`` (ascending) that were looked up, the rest words of letters; the rejoined ones are among them."""
    last = len(chunks) - 1
    for i, chunk in zip(at, odd, strict=True):
        if chunk not in hits:
            continue
        pieces = REJOINED[chunk]
        if (i > 0 and (_tokens_of(chunks[i - 1])[-1], pieces[0]) in PAIRS) or (
            i < last and (pieces[-1], _tokens_of(chunks[i + 1])[0]) in PAIRS
        ):
            if _crossed(chunks, i):
                return True
    return False


def _crossed(chunks: list[str], i: int) -> bool:
    """Whether a match across chunks, every gap taken for a plain space, comes before a special case rejoined
    inside chunk ``i`` and holds its first or last piece. Only such a match can keep it from being rejoined: a
    match is dropped when its first or last piece lies in any match taken before it, kept or dropped, so only
    the matches over those pieces decide. A match has at most ``_REACH + 1`` pieces and a chunk at least one, so
    the chunks ``_REACH`` either side hold every such match."""
    seq: list[str] = []
    groups: list[int] = []
    for j in range(max(0, i - _REACH), min(len(chunks), i + _REACH + 1)):
        pieces = _tokens_of(chunks[j])
        seq.extend(pieces)
        groups.extend([j] * len(pieces))
    first = groups.index(i)
    across = [(a, b) for a, b in candidate_matches(seq) if groups[a] != groups[b - 1]]
    for start, end in special_matches(list(REJOINED[chunks[i]])):  # rejoined inside the chunk alone
        start, end = start + first, end + first
        for a, b in across:
            if (a - b, a) < (start - end, start) and (a <= start < b or a < end <= b):
                return True
    return False
