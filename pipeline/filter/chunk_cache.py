"""spaCy's tokens of one whitespace-free chunk, cached per process: a special case, a word of letters, a word
between affix characters (fast paths), else the affix rules with split special cases rejoined."""

from __future__ import annotations

import re

from pipeline.filter import english_tables as T
from pipeline.filter.spacy_affixes import SPECIALS, affixes
from pipeline.filter.spacy_special_cases import restore_specials

CACHE: dict[str, tuple[str, ...]] = {}
CACHE_LIMIT = 500_000
REJOINED: dict[str, tuple[str, ...]] = {}  # chunk -> its pieces, when a special case was rejoined inside it


# A word of letters between single-character prefixes and suffixes ("(word", "word),"): each affix character
# is a token, unless a special case contains the word with some of them (then the full rules run).
_SIMPLE = re.compile("([" + T.PREFIX_CHARS + r"]*)(\w+)([" + T.SUFFIX_CHARS.replace(r"\u2026", "") + r"]*)\Z")
_SPECIAL_CORES = frozenset(m.group(2) for text in SPECIALS if (m := _SIMPLE.match(text)) and (m.group(1) or m.group(3)))
assert all(SPECIALS[c] == (c,) for c in SPECIALS if len(c) == 1), "a one-character special case splits"


def _simple(chunk: str) -> list[str] | None:
    """The tokens of a word of letters between affix characters, or None for any other chunk."""
    m = _SIMPLE.match(chunk)
    if m is None:
        return None
    pre, word, suf = m.groups()
    if not word.isalpha() or word in _SPECIAL_CORES:
        return None
    return [*pre, *SPECIALS.get(word, (word,)), *suf]


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
        pieces = _simple(chunk) or affixes(chunk, specials=True)
        tokens = tuple(restore_specials(pieces) if len(pieces) > 1 else pieces)
        if tokens != tuple(pieces):
            REJOINED[chunk] = tuple(pieces)
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
