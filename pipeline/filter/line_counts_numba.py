"""numba kernel of FineWeb's line rules (pipeline/filter/fineweb.py): per text of UTF-8 bytes, its non-blank lines,
those whose last character is a stop character, those of at most ``limit`` characters, and its characters less
its newlines, in one pass over the bytes.

A line is what ``text.split("\\n")`` yields, blank when empty or all ``str.isspace()`` (``space``, a table over
code points); lengths count code points (``len(line)``). The Python path of ``FineWebFilter`` gives the same
counts from Python strings."""

from __future__ import annotations

import numpy as np
from numba import njit


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
            b = np.int64(data[i])
            if b < 0x80:
                cp = b
                i += 1
            elif b < 0xE0:
                cp = ((b & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F)
                i += 2
            elif b < 0xF0:
                cp = ((b & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (np.int64(data[i + 2]) & 0x3F)
                i += 3
            else:
                cp = (
                    ((b & 0x07) << 18)
                    | ((np.int64(data[i + 1]) & 0x3F) << 12)
                    | ((np.int64(data[i + 2]) & 0x3F) << 6)
                    | (np.int64(data[i + 3]) & 0x3F)
                )
                i += 4
            chars += 1
            last = cp
            if blank and not space[cp]:
                blank = False
        out[d, 0] = lines
        out[d, 1] = ended
        out[d, 2] = short
        out[d, 3] = total
