"""spaCy's tokens of one whitespace-free chunk, cached per process: a special case, a word of letters, letters or
ASCII digits between single-character affixes or a word and its dot, a core between single-character affixes (fast
paths, cheapest first), else the affix rules; then split special cases rejoined."""

from __future__ import annotations

from itertools import compress, repeat
from operator import is_

from pipeline.text.english.spacy_affixes import SPECIALS, affixes, shortcut_affixes
from pipeline.text.english.spacy_special_cases import PAIRS, restore_specials

CACHE: dict[str, tuple[str, ...]] = {}  # the current generation
_OLDER: dict[str, tuple[str, ...]] = {}  # the generation before: its chunks move back into CACHE when seen again
CACHE_LIMIT = 500_000  # chunks both generations hold at most (and one text's beyond)
_GENERATION = CACHE_LIMIT // 2
REJOINED: dict[str, tuple[str, ...]] = {}  # chunk -> its pieces, when a special case was rejoined inside it


assert all(SPECIALS[c] == (c,) for c in SPECIALS if len(c) == 1), "a one-character special case splits"


def clear() -> None:
    """Forget every chunk (a cold start, as in a fresh worker process)."""
    CACHE.clear()
    _OLDER.clear()
    REJOINED.clear()


def _age() -> None:
    """The current generation becomes the older one; chunks of the older one not seen since are dropped."""
    _OLDER.clear()
    _OLDER.update(CACHE)
    CACHE.clear()
    for chunk in [c for c in REJOINED if c not in _OLDER]:
        del REJOINED[chunk]


def _make(chunk: str) -> tuple[str, ...]:
    """spaCy's tokens of one chunk, not cached (a rejoined special case noted in REJOINED)."""
    if chunk in SPECIALS:
        return SPECIALS[chunk]
    if chunk.isalpha():  # no affix or infix rule involves a letter alone (tests/unit/text/test_english_words.py)
        return (chunk,)
    pieces = shortcut_affixes(chunk) or affixes(chunk, specials=True)
    tokens = tuple(pieces)
    if len(pieces) > 1 and not PAIRS.isdisjoint(zip(pieces, pieces[1:], strict=False)):  # a match may start
        rejoined = tuple(restore_specials(pieces))
        if rejoined != tokens:
            REJOINED[chunk] = tokens
            return rejoined
    return tokens


def chunk_tokens(chunk: str) -> tuple[str, ...]:
    """spaCy's tokens of one whitespace-free chunk (cached)."""
    hit = CACHE.get(chunk)
    if hit is not None:
        return hit
    if len(CACHE) >= _GENERATION:
        _age()
    tokens = _OLDER.get(chunk) or _make(chunk)
    CACHE[chunk] = tokens
    return tokens


def lookup(chunks: list[str]) -> list[tuple[str, ...]]:
    """The cached tokens of every chunk, the missing ones made first (one pass over the distinct misses)."""
    tokens = list(map(CACHE.get, chunks))
    if None not in tokens:
        return tokens  # type: ignore[return-value]  # no None: every chunk was cached
    at = list(compress(range(len(chunks)), map(is_, tokens, repeat(None))))  # where a chunk missed
    missing = set(map(chunks.__getitem__, at))
    if len(CACHE) + len(missing) > _GENERATION:  # age now, not in the middle of this text
        _age()
        at, missing = list(range(len(chunks))), set(chunks)
    again = missing & _OLDER.keys()
    CACHE.update(zip(again, map(_OLDER.__getitem__, again), strict=True))
    missing -= again
    words = set(filter(str.isalpha, missing)) - SPECIALS.keys()  # one token each (see _make)
    CACHE.update(zip(words, zip(words), strict=True))
    for chunk in missing - words:
        CACHE[chunk] = _make(chunk)
    for i in at:  # the misses only: the hits are filled already
        tokens[i] = CACHE[chunks[i]]
    return tokens  # type: ignore[return-value]  # every None was filled
