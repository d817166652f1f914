"""Repetition measures shared by the Gopher and FineWeb rules: duplicated items (lines, paragraphs) and word
n-gram repetition, as datatrove 0.10.1's Gopher repetition filter defines them.

Word n-grams are compared as strings: joined with spaces for the top n-gram, concatenated without a separator
for duplicated n-grams (so different word splits of the same characters are the same n-gram). Windows are first
grouped by a polynomial hash of their characters (numpy, two primes); only windows whose hash repeats are
compared as real strings, which keeps the result exact whatever the hash does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

from pipeline.filter.chars import codepoints

_PRIMES = (2147483647, 2147483629)
_BASES = (911382323, 972663749)
_KEEP_POWERS = 1 << 22  # power tables up to this length stay cached (32 MB each at most)
_powers: dict[tuple[int, int], np.ndarray] = {}


def duplicates(items: Iterable[str]) -> tuple[int, int]:
    """How many items repeat an earlier one, and their total characters."""
    count = 0
    chars = 0
    for item, seen in Counter(items).items():
        if seen > 1:
            count += seen - 1
            chars += (seen - 1) * len(item)
    return count, chars


def _power_table(base: int, prime: int, size: int) -> np.ndarray:
    """``base ** i mod prime`` for ``i < size`` (int64), grown by doubling and kept per process."""
    table = _powers.get((base, prime))
    if table is None:
        table = np.ones(1, dtype=np.int64)
    while len(table) < size:
        step = pow(base, len(table), prime)
        table = np.concatenate([table, table * step % prime])
    if len(table) <= _KEEP_POWERS:
        _powers[(base, prime)] = table
    return table[:size]


class _Joined:
    """One string with a position-independent hash of any of its substrings."""

    def __init__(self, text: str) -> None:
        self.text = text
        cp = codepoints(text).astype(np.int64) + 1
        size = len(cp) + 1
        self.prefix: list[np.ndarray] = []
        self.power: list[np.ndarray] = []
        for base, prime in zip(_BASES, _PRIMES, strict=True):
            inverse = _power_table(pow(base, prime - 2, prime), prime, size)
            prefix = np.zeros(size, dtype=np.int64)
            np.cumsum(cp * inverse[:-1] % prime, out=prefix[1:])
            self.prefix.append(prefix % prime)
            self.power.append(_power_table(base, prime, size))

    def keys(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """A hash of each substring ``text[start:end]``; equal substrings have equal keys."""
        key = np.zeros(len(starts), dtype=np.int64)
        for prefix, power, prime in zip(self.prefix, self.power, _PRIMES, strict=True):
            h = (prefix[ends] - prefix[starts]) % prime * power[starts] % prime
            key = key * prime + h
        return key


def _repeated(keys: np.ndarray) -> np.ndarray:
    """Positions (ascending) whose key occurs more than once."""
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return np.flatnonzero(counts[inverse] > 1)


class WordGrams:
    """Word n-gram repetition of one document's words."""

    def __init__(self, words: list[str]) -> None:
        self.n_words = len(words)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        self._offsets = np.concatenate([[0], np.cumsum(lengths)])  # word i is [offsets[i], offsets[i+1]) of concat
        self._words = words
        self._spaced: _Joined | None = None
        self._concat: _Joined | None = None

    def top_chars(self, n: int) -> int | None:
        """Characters of the most frequent space-joined ``n``-gram times its count (the first of equals);
        None when there are fewer than ``n`` words."""
        m = self.n_words - n + 1
        if m <= 0:
            return None
        if self._spaced is None:
            self._spaced = _Joined(" ".join(self._words))
        index = np.arange(m)
        starts = self._offsets[:m] + index
        ends = self._offsets[n : n + m] + index + n - 1
        repeated = _repeated(self._spaced.keys(starts, ends))
        text = self._spaced.text
        top, count = "", 1
        if len(repeated):
            top, count = Counter([text[starts[p] : ends[p]] for p in repeated.tolist()]).most_common(1)[0]
        if count == 1:
            return int(ends[0] - starts[0])
        return len(top) * count

    def duplicated_chars(self, n: int) -> int:
        """Characters of concatenated ``n``-grams that repeat an earlier one, scanning left to right and jumping
        past each repeat (so overlapping repeats count once)."""
        m = self.n_words - n + 1
        if m <= 0:
            return 0
        if self._concat is None:
            self._concat = _Joined("".join(self._words))
        starts, ends = self._offsets[:m], self._offsets[n : n + m]
        repeated = _repeated(self._concat.keys(starts, ends))
        text = self._concat.text
        seen: set[str] = set()
        total = 0
        resume = 0  # the scan's next position: windows before it were jumped over
        for p in repeated.tolist():
            if p < resume:
                continue
            gram = text[starts[p] : ends[p]]
            if gram in seen:
                total += len(gram)
                resume = p + n
            else:
                seen.add(gram)
                resume = p + 1
        return total
