"""numba kernel of FineWeb's line rules (pipeline/filter/rules/fineweb.py): per text of UTF-8 bytes, its non-blank
lines, those whose last character is a stop character, those of at most ``limit`` characters, and its characters less
its newlines, in one pass over the bytes; then, for the texts still undecided, the characters of the non-blank
lines that repeat an earlier one (``duplicate_chars``).

A line is what ``text.split("\\n")`` yields, blank when empty or all ``str.isspace()`` (``space``, a table over
code points); lengths count code points (``len(line)``). The Python path of ``FineWebFilter`` gives the same
counts from Python strings."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _decode(data: np.ndarray, i: int) -> tuple[int, int]:
    """The code point of the character starting at byte ``i`` and the byte after it."""
    b = np.int64(data[i])
    if b < 0x80:
        return b, i + 1
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F), i + 2
    if b < 0xF0:
        return ((b & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (np.int64(data[i + 2]) & 0x3F), i + 3
    cp = ((b & 0x07) << 18) | ((np.int64(data[i + 1]) & 0x3F) << 12) | ((np.int64(data[i + 2]) & 0x3F) << 6)
    return cp | (np.int64(data[i + 3]) & 0x3F), i + 4


@njit(cache=True, nogil=True)
def line_counts(
    data: np.ndarray, offsets: np.ndarray, stop: np.ndarray, space: np.ndarray, limit: float, out: np.ndarray
) -> None:
    """``out[i]`` = (non-blank lines, of them ending in ``stop``, of them short, characters less newlines) of the
    text ``data[offsets[i]:offsets[i + 1]]`` (valid UTF-8)."""
    for d in range(len(offsets) - 1):
        i = offsets[d]
        end = offsets[d + 1]
        lines = ended = short = total = 0
        chars = 0
        blank = True
        last = 0
        while i <= end:
            if i == end or data[i] == 10:
                if not blank:
                    lines += 1
                    ended += stop[last]
                    short += chars <= limit
                total += chars
                chars = 0
                blank = True
                i += 1
                continue
            cp, i = _decode(data, i)
            chars += 1
            last = cp
            if blank and not space[cp]:
                blank = False
        out[d, 0] = lines
        out[d, 1] = ended
        out[d, 2] = short
        out[d, 3] = total


@njit(cache=True, nogil=True)
def _same(data: np.ndarray, a: int, b: int, length: int) -> bool:
    for k in range(length):
        if data[a + k] != data[b + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def duplicate_chars(
    data: np.ndarray, offsets: np.ndarray, texts: np.ndarray, space: np.ndarray, out: np.ndarray
) -> None:
    """``out[k]``: characters of the non-blank lines of text ``texts[k]`` that equal an earlier line (all lines less
    the distinct ones). Lines are grouped by a 64-bit FNV-1a hash of their bytes, then compared byte by byte, so
    the count is exact whatever the hash does."""
    for k in range(len(texts)):
        d = texts[k]
        end = offsets[d + 1]
        n = 0
        i = offsets[d]
        while i <= end:  # lines first: at most one per newline, plus one
            if i == end or data[i] == 10:
                n += 1
            i += 1
        starts = np.empty(n, dtype=np.int64)
        stops = np.empty(n, dtype=np.int64)
        chars = np.empty(n, dtype=np.int64)
        hashes = np.empty(n, dtype=np.uint64)
        m = 0
        i = offsets[d]
        begin = i
        count = 0
        blank = True
        h = np.uint64(14695981039346656037)
        while i <= end:
            if i == end or data[i] == 10:
                if not blank:
                    starts[m], stops[m], chars[m], hashes[m] = begin, i, count, h
                    m += 1
                i += 1
                begin, count, blank, h = i, 0, True, np.uint64(14695981039346656037)
                continue
            at = i
            cp, i = _decode(data, i)
            for j in range(at, i):
                h = (h ^ np.uint64(data[j])) * np.uint64(1099511628211)
            count += 1
            if blank and not space[cp]:
                blank = False
        order = np.argsort(hashes[:m])
        total = 0
        g = 0
        while g < m:
            e = g + 1
            while e < m and hashes[order[e]] == hashes[order[g]]:
                e += 1
            for a in range(g + 1, e):  # a line equal to an earlier one of its group is a duplicate
                x = order[a]
                for b in range(g, a):
                    y = order[b]
                    size = stops[x] - starts[x]
                    if stops[y] - starts[y] == size and _same(data, starts[x], starts[y], size):
                        total += chars[x]
                        break
            g = e
        out[k] = total
