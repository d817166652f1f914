"""The SHA-1 kernel of pipeline/dedup/sha1_numba.py before issue #16 (scalar, uint64 words, padding built byte by byte),
kept only so that bench/bench_dedup_features.py can print the old and the new kernel side by side in one run.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_M = np.uint64(0xFFFFFFFF)
_U64 = np.uint64
_H = (np.uint64(0x67452301), np.uint64(0xEFCDAB89), np.uint64(0x98BADCFE), np.uint64(0x10325476), np.uint64(0xC3D2E1F0))
_K = (np.uint64(0x5A827999), np.uint64(0x6ED9EBA1), np.uint64(0x8F1BBCDC), np.uint64(0xCA62C1D6))


@njit(cache=True, nogil=True, inline="always")
def _rotl(x: np.uint64, r: int) -> np.uint64:
    return ((x << _U64(r)) | (x >> _U64(32 - r))) & _M


@njit(cache=True, nogil=True, inline="always")
def _message_byte(buf: np.ndarray, lo: int, n: int, i: int, total: int) -> np.uint64:
    """Byte ``i`` of the padded message: data, 0x80, zeros, then the 64-bit big-endian bit length."""
    if i < n:
        return _U64(buf[lo + i])
    if i == n:
        return _U64(0x80)
    if i >= total - 8:
        return (_U64(n) * _U64(8) >> _U64(8 * (total - 1 - i))) & _U64(0xFF)
    return _U64(0)


@njit(cache=True, nogil=True)
def sha1_hash32(buf: np.ndarray, lo: int, hi: int, w: np.ndarray) -> np.uint32:
    """``sha1_hash32(bytes(buf[lo:hi]))``; ``w`` is an 80-word uint64 scratch array."""
    n = hi - lo
    total = ((n + 8) // 64 + 1) * 64
    h0, h1, h2, h3, h4 = _H
    for base in range(0, total, 64):
        for t in range(16):
            i = base + 4 * t
            if i + 4 <= n:
                j = lo + i
                w[t] = (
                    (_U64(buf[j]) << _U64(24))
                    | (_U64(buf[j + 1]) << _U64(16))
                    | (_U64(buf[j + 2]) << _U64(8))
                    | _U64(buf[j + 3])
                )
            else:
                v = _U64(0)
                for k in range(4):
                    v = (v << _U64(8)) | _message_byte(buf, lo, n, i + k, total)
                w[t] = v
        for t in range(16, 80):
            w[t] = _rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1)
        a, b, c, d, e = h0, h1, h2, h3, h4
        for t in range(20):
            f = (b & c) | ((~b) & d)
            a, b, c, d, e = (_rotl(a, 5) + f + e + _K[0] + w[t]) & _M, a, _rotl(b, 30), c, d
        for t in range(20, 40):
            f = b ^ c ^ d
            a, b, c, d, e = (_rotl(a, 5) + f + e + _K[1] + w[t]) & _M, a, _rotl(b, 30), c, d
        for t in range(40, 60):
            f = (b & c) | (b & d) | (c & d)
            a, b, c, d, e = (_rotl(a, 5) + f + e + _K[2] + w[t]) & _M, a, _rotl(b, 30), c, d
        for t in range(60, 80):
            f = b ^ c ^ d
            a, b, c, d, e = (_rotl(a, 5) + f + e + _K[3] + w[t]) & _M, a, _rotl(b, 30), c, d
        h0, h1, h2, h3, h4 = (h0 + a) & _M, (h1 + b) & _M, (h2 + c) & _M, (h3 + d) & _M, (h4 + e) & _M
    # First digest bytes are h0 big-endian; read little-endian that is h0 byte-swapped.
    swapped = (
        ((h0 & _U64(0xFF)) << _U64(24))
        | ((h0 & _U64(0xFF00)) << _U64(8))
        | ((h0 >> _U64(8)) & _U64(0xFF00))
        | (h0 >> _U64(24))
    )
    return np.uint32(swapped)


@njit(cache=True, nogil=True)
def sha1_windows(
    buf: np.ndarray, lo: np.ndarray, hi: np.ndarray, unit_off: np.ndarray, ngram: int
) -> tuple[np.ndarray, np.ndarray]:
    """``sha1_hash32`` of every K-gram of each document's units (the bytes from the first unit's
    start to the last one's end; all units when a document has fewer than K), in document order.
    Repeated shingles of a document are hashed again (MinHash ignores repeats).
    Returns (uint32 hashes, int64 offsets per document)."""
    n_docs = unit_off.shape[0] - 1
    win_off = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        n = unit_off[d + 1] - unit_off[d]
        win_off[d + 1] = win_off[d] + (n - ngram + 1 if n >= ngram else min(n, 1))
    w = np.empty(80, dtype=np.uint64)
    out = np.empty(win_off[n_docs], dtype=np.uint32)
    for d in range(n_docs):
        first = unit_off[d]
        width = min(unit_off[d + 1] - first, ngram)
        for k in range(win_off[d + 1] - win_off[d]):
            out[win_off[d] + k] = sha1_hash32(buf, lo[first + k], hi[first + k + width - 1], w)
    return out, win_off
