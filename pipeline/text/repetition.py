"""Repetition measures shared by the Gopher and FineWeb rules: duplicated items (lines, paragraphs) and word
n-gram repetition, as datatrove 0.10.1's Gopher repetition filter defines them.

Word n-grams are compared as strings: joined with spaces for the top n-gram, concatenated without a separator
for duplicated n-grams (so different word splits of the same characters are the same n-gram). Windows are first
grouped by a polynomial hash (numpy, modulo 2**64) of their characters, or of their words' hashes when no word
holds a space; only windows whose hash repeats are then compared as real strings, so every result is exact
whatever the hash does (a collision only costs time). :func:`word_grams` gives the compiled twin
(``repetition_numba``) when :func:`compiled` returns the kernels (the FILTER numba switch).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from types import ModuleType
from typing import Protocol

import numpy as np

from pipeline.numba_backend import FILTER
from pipeline.text.chars import codepoints

_CHAR_BASE = 0x9E3779B97F4A7C15  # odd: invertible modulo 2**64
_WORD_BASE = 0xC2B2AE3D27D4EB4F
_INVERSE = {base: pow(base, -1, 1 << 64) for base in (_CHAR_BASE, _WORD_BASE)}
_KEEP_POWERS = 1 << 22  # power tables up to this length stay cached (32 MB each at most)
_powers: dict[int, np.ndarray] = {}


def duplicates(items: Sequence[str]) -> tuple[int, int]:
    """How many items repeat an earlier one, and their total characters: all items less the distinct ones."""
    distinct = set(items)
    return len(items) - len(distinct), sum(map(len, items)) - sum(map(len, distinct))


def _power_table(base: int, size: int) -> np.ndarray:
    """``base ** i`` modulo 2**64 for ``i < size`` (uint64), grown by doubling and kept per process."""
    table = _powers.get(base)
    if table is None:
        table = np.ones(1, dtype=np.uint64)
    while len(table) < size:
        table = np.concatenate([table, table * np.uint64(pow(base, len(table), 1 << 64))])
    if len(table) <= _KEEP_POWERS:
        _powers[base] = table
    return table[:size]


class _Polynomial:
    """Position-independent hashes of any run of a sequence of integers (modulo 2**64)."""

    def __init__(self, values: np.ndarray, base: int) -> None:
        size = len(values) + 1
        self.power = _power_table(base, size)
        self.prefix = np.zeros(size, dtype=np.uint64)
        np.cumsum(values * _power_table(_INVERSE[base], size)[:-1], out=self.prefix[1:])

    def runs(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """A hash of each run ``values[start:end]``; equal runs have equal hashes."""
        return (self.prefix[ends] - self.prefix[starts]) * self.power[starts]


def _repeated(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions (ascending) whose key occurs more than once, each one's group (a number per distinct key) and
    each group's size."""
    order = np.argsort(keys)
    ranked = keys[order]
    same = ranked[1:] == ranked[:-1]
    if not same.any():
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    group = np.concatenate([[0], np.cumsum(~same)])  # per sorted position
    sizes = np.bincount(group)
    group_at = np.empty(len(keys), dtype=np.int64)
    group_at[order] = group
    positions = np.flatnonzero(sizes[group_at] > 1)
    return positions, group_at[positions], sizes


class WordGrams:
    """Word n-gram repetition of one document's words."""

    def __init__(self, words: list[str]) -> None:
        self.n_words = len(words)
        self._words = words
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        self._offsets = np.concatenate([[0], np.cumsum(lengths)])  # word i is [offsets[i], offsets[i+1]) of concat
        self._concat = "".join(words)
        self._chars: _Polynomial | None = None
        self._spaced: _Polynomial | None = None
        self._spaced_text: str | None = None  # " ".join(words) when a word holds a space (hashed by characters)

    def _char_hashes(self) -> _Polynomial:
        if self._chars is None:
            self._chars = _Polynomial(codepoints(self._concat).astype(np.uint64) + np.uint64(1), _CHAR_BASE)
        return self._chars

    def _spaced_keys(self, n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Keys of the ``m`` space-joined ``n``-grams, with their start and end in ``" ".join(words)``."""
        index = np.arange(m)
        starts = self._offsets[:m] + index
        ends = self._offsets[n : n + m] + index + n - 1
        if " " in self._concat:  # words with spaces: hash the joined characters themselves
            if self._spaced is None:
                self._spaced_text = " ".join(self._words)
                self._spaced = _Polynomial(codepoints(self._spaced_text).astype(np.uint64) + np.uint64(1), _CHAR_BASE)
            return self._spaced.runs(starts, ends), starts, ends
        if self._spaced is None:
            chars = self._char_hashes()
            word_keys = chars.runs(self._offsets[:-1], self._offsets[1:]) ^ np.uint64(0x5BD1E995)
            self._spaced = _Polynomial(word_keys * (np.diff(self._offsets).astype(np.uint64) | 1), _WORD_BASE)
        return self._spaced.runs(index, index + n), starts, ends

    def _spaced_gram(self, p: int, n: int) -> str:
        return " ".join(self._words[p : p + n])

    def top_chars(self, n: int) -> int | None:
        """Characters of the most frequent space-joined ``n``-gram times its count (the first of equals);
        None when there are fewer than ``n`` words."""
        m = self.n_words - n + 1
        if m <= 0:
            return None
        keys, starts, ends = self._spaced_keys(n, m)
        positions, groups, sizes = _repeated(keys)
        if not len(positions):
            return int(ends[0] - starts[0])
        # the largest group, the first to occur among equals; exact when its members are one string
        first_of = np.full(len(sizes), m, dtype=np.int64)
        np.minimum.at(first_of, groups, positions)
        largest = int(sizes.max())
        best = int(np.flatnonzero(sizes == largest)[np.argmin(first_of[sizes == largest])])
        members = positions[groups == best].tolist()
        grams = {self._spaced_gram(p, n) for p in members}
        if len(grams) == 1:
            return len(grams.pop()) * largest
        counted = Counter(self._spaced_gram(p, n) for p in positions.tolist())
        top, count = counted.most_common(1)[0]
        return int(ends[0] - starts[0]) if count == 1 else len(top) * count

    def duplicated_chars(self, n: int) -> int:
        """Characters of concatenated ``n``-grams that repeat an earlier one, scanning left to right and jumping
        past each repeat (so overlapping repeats count once)."""
        m = self.n_words - n + 1
        if m <= 0:
            return 0
        starts, ends = self._offsets[:m], self._offsets[n : n + m]
        positions, _, _ = _repeated(self._char_hashes().runs(starts, ends))
        if not len(positions):
            return 0
        text = self._concat
        at = positions.tolist()
        grams = [text[a:b] for a, b in zip(starts[positions].tolist(), ends[positions].tolist(), strict=True)]
        seen: set[str] = set()
        total = 0
        resume = 0  # the scan's next position: windows before it were jumped over
        for p, gram in zip(at, grams, strict=True):
            if p < resume:
                continue
            if gram in seen:
                total += len(gram)
                resume = p + n
            else:
                seen.add(gram)
                resume = p + 1
        return total


class Grams(Protocol):
    """What the rules ask of a document's word n-grams (:class:`WordGrams` or its compiled twin)."""

    def top_chars(self, n: int) -> int | None: ...

    def duplicated_chars(self, n: int) -> int: ...


class CompiledWordGrams:
    """:class:`WordGrams` through the compiled kernels (``repetition_numba``), for words holding no newline and no
    space (``usable`` is false otherwise): the same counts."""

    def __init__(self, words: list[str], kernel: ModuleType) -> None:
        self.n_words = len(words)
        self._kernel = kernel
        self._joined = codepoints("\n".join(words))
        prepared = kernel.prepare(self._joined, len(words))
        self.usable, self._starts, self._ids, self._word_prefix, self._concat, *self._scratch = prepared
        self._powers = _compiled_powers(kernel, len(self._joined) + 1)

    def top_chars(self, n: int) -> int | None:
        """See :meth:`WordGrams.top_chars`."""
        slots, keys, counts, reps = self._scratch
        top = self._kernel.top_chars(
            self._starts, self._ids, self._word_prefix, self._powers, n, slots, keys, counts, reps
        )
        return None if top < 0 else int(top)

    def duplicated_chars(self, n: int) -> int:
        """See :meth:`WordGrams.duplicated_chars`."""
        slots, keys, _, _ = self._scratch
        chars = self._kernel.duplicated_chars(
            self._joined, self._starts, self._ids, self._concat, self._powers, n, slots, keys
        )
        return int(chars)


_compiled_power_table: list[np.ndarray] = []


def _compiled_powers(kernel: ModuleType, size: int) -> np.ndarray:
    """At least ``size`` powers of the compiled kernels' base: kept per process (grown by doubling) up to
    ``_KEEP_POWERS``, made for the one document beyond."""
    if size > _KEEP_POWERS:
        return kernel.powers(size)
    if not _compiled_power_table or len(_compiled_power_table[0]) < size:
        have = len(_compiled_power_table[0]) if _compiled_power_table else 1 << 16
        while have < size:
            have *= 2
        _compiled_power_table[:] = [kernel.powers(have)]
    return _compiled_power_table[0]


def word_grams(words: list[str], kernel: ModuleType | None) -> Grams:
    """The n-gram counter of one document's words: compiled with ``kernel`` (:func:`compiled`) unless a word holds
    a newline or a space (never so from the word splitter), else :class:`WordGrams`."""
    if kernel is not None:
        grams = CompiledWordGrams(words, kernel)
        if grams.usable:
            return grams
    return WordGrams(words)


def compiled(size: int) -> ModuleType | None:
    """The compiled kernels (``repetition_numba``) when a document of ``size`` characters runs compiled (the FILTER
    numba switch), else None."""
    if not FILTER.use("repetition", size):
        return None
    # lazy: importing numba and loading the kernels costs seconds, paid only once a process uses them
    from pipeline.text import repetition_numba

    return repetition_numba
