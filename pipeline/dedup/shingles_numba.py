"""numba twin of :mod:`pipeline.dedup.shingles`: a batch's code points cut into units (word runs, exactly
as ``re.findall(r"\\w+")``), as UTF-8 byte ranges or as fast unit hashes.

The caller lower-cases every text with ``str.lower`` (so Unicode special cases such as final sigma
stay Python's), concatenates them and hands over the UTF-32 code points with per-document offsets.
A code point is a word character iff Python's ``re`` says so (:func:`word_table`, computed once with
``re`` itself), so tokens equal :func:`pipeline.dedup.shingles.tokens`. Units are the tokens
(``char_mode=False``) or the code points of the tokens joined by single spaces (``char_mode=True``).
:func:`first_distinct_windows` is the twin of the ``max_shingles`` cap (the first distinct shingles of a
document, by bytes) over that layout.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
from numba import njit

from pipeline.dedup.hash_mixers import UNIT_LEN_SALT, UNIT_MUL
from pipeline.dedup.hashes_numba import fmix64

_SPACE = 0x20


@lru_cache(maxsize=1)
def word_table() -> np.ndarray:
    """bool[0x110000]: True where ``re`` matches ``\\w`` on that code point (built once)."""
    every = np.arange(0x110000, dtype=np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    table = np.zeros(0x110000, dtype=np.bool_)
    for m in re.finditer(r"\w+", every):
        table[m.start() : m.end()] = True
    table.setflags(write=False)
    return table


@njit(cache=True, nogil=True, inline="always")
def _max_units(n_cps: int, n_docs: int, char_mode: bool) -> int:
    """Upper bound on the units: a document of n code points has at most (n+1)//2 tokens."""
    return n_cps + 1 if char_mode else (n_cps + n_docs) // 2 + 1


@njit(cache=True, nogil=True)
def utf8_units(
    cps: np.ndarray, doc_off: np.ndarray, is_word: np.ndarray, char_mode: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """UTF-8 of each document's tokens joined by single spaces, all documents back to back.

    Returns ``(buf, lo, hi, unit_off)``: unit ``u`` is ``buf[lo[u]:hi[u]]`` (a token, or one code
    point in char mode) and document ``d`` owns units ``unit_off[d]:unit_off[d+1]``.
    """
    n_docs = doc_off.shape[0] - 1
    buf = np.empty(4 * cps.shape[0] + 1, dtype=np.uint8)  # >= 4 bytes per word cp + 1 space per gap
    max_units = _max_units(cps.shape[0], n_docs, char_mode)
    lo = np.empty(max_units, dtype=np.int64)
    hi = np.empty(max_units, dtype=np.int64)
    unit_off = np.zeros(n_docs + 1, dtype=np.int64)
    pos = 0
    u = 0
    for d in range(n_docs):
        in_tok = False
        first = True
        for i in range(doc_off[d], doc_off[d + 1]):
            c = cps[i]
            if not is_word[c]:
                if in_tok and not char_mode:
                    hi[u] = pos
                    u += 1
                in_tok = False
                continue
            if not in_tok:
                if not first:
                    if char_mode:
                        lo[u] = pos
                        hi[u] = pos + 1
                        u += 1
                    buf[pos] = _SPACE
                    pos += 1
                if not char_mode:
                    lo[u] = pos
                in_tok = True
                first = False
            if char_mode:
                lo[u] = pos
            if c < 0x80:
                buf[pos] = c
                pos += 1
            elif c < 0x800:
                buf[pos] = 0xC0 | (c >> 6)
                buf[pos + 1] = 0x80 | (c & 0x3F)
                pos += 2
            elif c < 0x10000:
                buf[pos] = 0xE0 | (c >> 12)
                buf[pos + 1] = 0x80 | ((c >> 6) & 0x3F)
                buf[pos + 2] = 0x80 | (c & 0x3F)
                pos += 3
            else:
                buf[pos] = 0xF0 | (c >> 18)
                buf[pos + 1] = 0x80 | ((c >> 12) & 0x3F)
                buf[pos + 2] = 0x80 | ((c >> 6) & 0x3F)
                buf[pos + 3] = 0x80 | (c & 0x3F)
                pos += 4
            if char_mode:
                hi[u] = pos
                u += 1
        if in_tok and not char_mode:
            hi[u] = pos
            u += 1
        unit_off[d + 1] = u
    return buf[:pos].copy(), lo[:u].copy(), hi[:u].copy(), unit_off


@njit(cache=True, nogil=True)
def unit_hashes(
    cps: np.ndarray, doc_off: np.ndarray, is_word: np.ndarray, char_mode: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Fast 64-bit hash of every unit: ``fmix64(H + n * SALT)`` with ``H`` the Horner polynomial
    ``H = H * MUL + (c + 1)`` over the unit's ``n`` code points (uint64 wrap-around).

    Returns ``(unit_h, unit_off)`` laid out like :func:`utf8_units`.
    """
    n_docs = doc_off.shape[0] - 1
    out = np.empty(_max_units(cps.shape[0], n_docs, char_mode), dtype=np.uint64)
    unit_off = np.zeros(n_docs + 1, dtype=np.int64)
    one = np.uint64(1)
    space_h = fmix64(np.uint64(_SPACE + 1) + UNIT_LEN_SALT)
    u = 0
    for d in range(n_docs):
        h = np.uint64(0)
        n = 0
        first = True
        for i in range(doc_off[d], doc_off[d + 1]):
            c = cps[i]
            if is_word[c]:
                if char_mode:
                    if n == 0 and not first:
                        out[u] = space_h
                        u += 1
                    out[u] = fmix64(np.uint64(c) + one + UNIT_LEN_SALT)
                    u += 1
                else:
                    h = h * UNIT_MUL + (np.uint64(c) + one)
                n += 1
            elif n:
                if not char_mode:
                    out[u] = fmix64(h + np.uint64(n) * UNIT_LEN_SALT)
                    u += 1
                h = np.uint64(0)
                n = 0
                first = False
        if n and not char_mode:
            out[u] = fmix64(h + np.uint64(n) * UNIT_LEN_SALT)
            u += 1
        unit_off[d + 1] = u
    return out[:u].copy(), unit_off


@njit(cache=True, nogil=True, inline="always")
def _word_at(buf: np.ndarray, i: np.uint64) -> np.uint64:
    """The 8 bytes ``buf[i:i+8]`` as one big-endian word (unsigned indices: LLVM fuses the loads into one)."""
    v = np.uint64(0)
    for k in range(8):
        v = (v << np.uint64(8)) | np.uint64(buf[i + np.uint64(k)])
    return v


@njit(cache=True, nogil=True)
def same_bytes(buf: np.ndarray, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> bool:
    """``buf[a_lo:a_hi] == buf[b_lo:b_hi]``, compared 8 bytes at a time."""
    n = a_hi - a_lo
    if n != b_hi - b_lo:
        return False
    i = 0
    while i + 8 <= n:
        if _word_at(buf, np.uint64(a_lo + i)) != _word_at(buf, np.uint64(b_lo + i)):
            return False
        i += 8
    while i < n:
        if buf[np.uint64(a_lo + i)] != buf[np.uint64(b_lo + i)]:
            return False
        i += 1
    return True


@njit(cache=True, nogil=True)
def first_distinct_windows(
    buf: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    unit_off: np.ndarray,
    win_off: np.ndarray,
    keys: np.ndarray,
    ngram: int,
    cap: int,
) -> np.ndarray:
    """Keep mask over the K-gram windows laid out by ``win_off`` (as ``sha1_numba.sha1_windows`` lists them):
    in a document with more than ``cap`` windows, True at the first occurrence of each of its first ``cap``
    distinct shingles and False elsewhere; every window of the other documents is kept.

    ``keys`` is a 32-bit hash of each window's bytes (its SHA-1 value). Each document is one pass over an
    open-addressing table whose slot holds a window's key and byte length in one word and its start in the
    next (one cache line per probe); a window whose key and length match a slot's is compared byte by byte,
    so distinct means distinct bytes, and the cost is linear in the document's bytes whatever its size.
    """
    n_docs = unit_off.shape[0] - 1
    keep = np.ones(win_off[n_docs], dtype=np.bool_)
    size = 1
    while size < 2 * cap:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.empty(2 * size, dtype=np.uint64)  # slot j: (key << 32 | length) at 2j (0: free), start at 2j + 1
    for d in range(n_docs):
        count = win_off[d + 1] - win_off[d]
        if count <= cap:
            continue
        table[:] = 0
        first, base = unit_off[d], win_off[d]
        width = min(unit_off[d + 1] - first, ngram)
        distinct = 0
        for k in range(count):
            if distinct == cap:
                keep[base + k : win_off[d + 1]] = False
                break
            s, e = lo[first + k], hi[first + k + width - 1]
            key = np.uint64(keys[base + k])
            tag = (key << np.uint64(32)) | np.uint64(e - s)
            j = key & mask
            seen = False
            while table[2 * j] != 0:
                if table[2 * j] == tag:
                    t = np.int64(table[2 * j + 1])
                    if same_bytes(buf, t, t + (e - s), s, e):
                        seen = True
                        break
                j = (j + np.uint64(1)) & mask
            if seen:
                keep[base + k] = False
            else:
                table[2 * j], table[2 * j + 1] = tag, np.uint64(s)
                distinct += 1
    return keep
