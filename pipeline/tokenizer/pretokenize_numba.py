"""numba GPT-2 pre-tokenizer over UTF-8 bytes: the exact match sequence of ``PRETOKEN_RE.findall``.

The pattern ``'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+`` only
tests single code points against three classes, so a table of the class of every code point (built
from the ``regex`` module itself, see :func:`pipeline.tokenizer.encode.char_classes`) and the
alternatives' order reproduce it without backtracking:

* ``'`` followed by ``s d m t`` / ``ll ve re`` -> that contraction;
* a letter / number / other -> the longest run of its class; a space followed by one of them -> the
  space plus that run;
* otherwise whitespace: the longest whitespace run if it reaches the end of the text; else the run
  minus its last character (which then starts the next pre-token), or the single character if the
  run has length one.
"""

from __future__ import annotations

from numba import njit

OTHER, LETTER, NUMBER, SPACE = 0, 1, 2, 3


@njit(cache=True, nogil=True, inline="always")
def _decode(data, p):
    """(code point, byte length) of the valid UTF-8 character at ``data[p]``."""
    b = data[p]
    if b < 0x80:
        return b, 1
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (data[p + 1] & 0x3F), 2
    if b < 0xF0:
        return ((b & 0x0F) << 12) | ((data[p + 1] & 0x3F) << 6) | (data[p + 2] & 0x3F), 3
    return (((b & 0x07) << 18) | ((data[p + 1] & 0x3F) << 12) | ((data[p + 2] & 0x3F) << 6) | (data[p + 3] & 0x3F)), 4


@njit(cache=True, nogil=True, inline="always")
def _run_end(data, q, end, classes, cls):
    while q < end:
        cp, n = _decode(data, q)
        if classes[cp] != cls:
            break
        q += n
    return q


@njit(cache=True, nogil=True)
def pretoken_end(data, p, end, classes):
    """End (exclusive) of the pre-token starting at byte ``p`` of the text ``data[:end]``."""
    cp, n = _decode(data, p)
    if cp == 0x27 and p + 1 < end:  # ' : contractions, case-sensitive
        b1 = data[p + 1]
        if b1 == 0x73 or b1 == 0x64 or b1 == 0x6D or b1 == 0x74:  # s d m t
            return p + 2
        if p + 2 < end:
            b2 = data[p + 2]
            if (b1 == 0x6C and b2 == 0x6C) or (b1 == 0x76 and b2 == 0x65) or (b1 == 0x72 and b2 == 0x65):
                return p + 3  # ll ve re
    cls = classes[cp]
    if cp == 0x20 and p + 1 < end:
        cp2, n2 = _decode(data, p + 1)
        cls2 = classes[cp2]
        if cls2 != SPACE:
            return _run_end(data, p + 1 + n2, end, classes, cls2)
    if cls != SPACE:
        return _run_end(data, p + n, end, classes, cls)
    q = p + n
    last = p  # start of the run's last character
    while q < end:
        cp, n = _decode(data, q)
        if classes[cp] != SPACE:
            break
        last = q
        q += n
    if q == end or last == p:
        return q
    return last
