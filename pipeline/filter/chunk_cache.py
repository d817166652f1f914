"""spaCy's tokens of one whitespace-free chunk, cached per process: a special case, a word of letters, a core
between single-character affixes (fast paths), else the affix rules; then split special cases rejoined."""

from __future__ import annotations

from pipeline.filter.spacy_affixes import SPECIALS, affixes, stripped_affixes
from pipeline.filter.spacy_special_cases import PAIRS, restore_specials

CACHE: dict[str, tuple[str, ...]] = {}
CACHE_LIMIT = 500_000
REJOINED: dict[str, tuple[str, ...]] = {}  # chunk -> its pieces, when a special case was rejoined inside it


assert all(SPECIALS[c] == (c,) for c in SPECIALS if len(c) == 1), "a one-character special case splits"


def chunk_tokens(chunk: str) -> tuple[str, ...]:
    """spaCy's tokens of one whitespace-free chunk (cached)."""
    hit = CACHE.get(chunk)
    if hit is not None:
        return hit
    if len(CACHE) >= CACHE_LIMIT:  # both tables start over together
        CACHE.clear()
        REJOINED.clear()
    if chunk in SPECIALS:
        tokens: tuple[str, ...] = SPECIALS[chunk]
    elif chunk.isalpha():  # no affix or infix rule involves a letter alone (tests/test_filter_words.py)
        tokens = (chunk,)
    else:
        pieces = stripped_affixes(chunk) or affixes(chunk, specials=True)
        tokens = tuple(pieces)
        if len(pieces) > 1 and not PAIRS.isdisjoint(zip(pieces, pieces[1:], strict=False)):  # a match may start
            rejoined = tuple(restore_specials(pieces))
            if rejoined != tokens:
                REJOINED[chunk] = tokens
                tokens = rejoined
    CACHE[chunk] = tokens
    return tokens


def lookup(chunks: list[str]) -> list[tuple[str, ...]]:
    """The cached tokens of every chunk, the missing ones made first (one pass over the distinct misses)."""
    get = CACHE.get
    tokens = list(map(get, chunks))
    if None not in tokens:
        return tokens  # type: ignore[return-value]  # no None: every chunk was cached
    missing = set(chunks).difference(CACHE)
    if len(CACHE) + len(missing) > CACHE_LIMIT:  # start over now, not in the middle of this text
        CACHE.clear()
        REJOINED.clear()
        missing = set(chunks)
    made = {chunk: chunk_tokens(chunk) for chunk in missing}
    return [get(c) or made[c] for c in chunks]
