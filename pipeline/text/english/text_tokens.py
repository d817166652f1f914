"""spaCy's tokens of every chunk of one text: the cached tokens of each chunk, corrected where a special case's
pieces could straddle the plain space between two chunks (spaCy matches special cases over the whole text)."""

from __future__ import annotations

import re

from pipeline.text.english.chunk_cache import REJOINED, lookup
from pipeline.text.english.spacy_affixes import SPECIALS
from pipeline.text.english.spacy_special_cases import MATCHER, PAIRS, special_matches

_GAPS = re.compile(r"(\s+)")


def positions(chunks: list[str], hits: set[str]) -> list[int]:
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
