"""numba kernels: MinHash signature matrices and fast-hash K-gram windows, one pass per batch.

Arithmetic is exactly datasketch 2.x's (see ``minhash.py``): numba widens uint32 operations to
uint64, so every 32-bit result is truncated explicitly with ``np.uint32(...)``; the legacy scheme
works in uint64 with wrap-around like numpy. Each document keeps its ``P`` running minima in its own
output row (1-2 KB, cache resident) while its shingles stream past.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.dedup import mixing

_U32 = np.uint32
_U64 = np.uint64
_M61 = np.uint64((1 << 61) - 1)
_M32 = np.uint64(0xFFFFFFFF)
_S61 = np.uint64(61)
_S32 = np.uint64(32)
_POLY = mixing.WINDOW_MUL
_LEN_SALT = mixing.WINDOW_LEN_SALT

fmix32 = njit(cache=True, nogil=True, inline="always")(mixing.fmix32)  # the numpy kernels' own mixers
fmix64 = njit(cache=True, nogil=True, inline="always")(mixing.fmix64)


@njit(cache=True, nogil=True)
def affine32_signatures(hashes: np.ndarray, offsets: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out[d, p] = min over document d's hashes h of ``a[p] * fmix32(h) + b[p] mod 2^32``.

    ``out`` (uint32, shape (n_docs, P)) must arrive filled with the empty value 0xFFFFFFFF.
    """
    num_perm = a.shape[0]
    for d in range(offsets.shape[0] - 1):
        row = out[d]
        for i in range(offsets[d], offsets[d + 1]):
            x = fmix32(hashes[i])
            for p in range(num_perm):
                v = _U32(a[p] * x + b[p])
                row[p] = min(row[p], v)


@njit(cache=True, nogil=True)
def legacy_signatures(hashes: np.ndarray, offsets: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out[d, p] = min over h of ``((a[p]*h + b[p]) mod (2^61-1)) & 0xFFFFFFFF``, ``a*h + b`` in
    uint64 with wrap-around (as numpy computes it in datasketch); ``out`` is uint64, pre-filled."""
    num_perm = a.shape[0]
    for d in range(offsets.shape[0] - 1):
        row = out[d]
        for i in range(offsets[d], offsets[d + 1]):
            h = _U64(hashes[i])
            for p in range(num_perm):
                x = a[p] * h + b[p]
                r = (x & _M61) + (x >> _S61)  # < 2p; subtract p once when >= p (wraps otherwise)
                r = min(r, r - _M61) & _M32
                row[p] = min(row[p], r)


@njit(cache=True, nogil=True)
def window_hashes(unit_h: np.ndarray, unit_off: np.ndarray, ngram: int) -> tuple[np.ndarray, np.ndarray]:
    """Fast-hash shingles: per document, every K-gram of unit hashes (one window of all units when
    it has fewer than K) combined as ``acc = fmix64(width * SALT); acc = acc * POLY + u`` and
    finalised to the high 32 bits of ``fmix64(acc)``. Returns (uint32 hashes, int64 offsets)."""
    n_docs = unit_off.shape[0] - 1
    win_off = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        n = unit_off[d + 1] - unit_off[d]
        win_off[d + 1] = win_off[d] + (n - ngram + 1 if n >= ngram else min(n, 1))
    out = np.empty(win_off[n_docs], dtype=np.uint32)
    for d in range(n_docs):
        lo = unit_off[d]
        n = unit_off[d + 1] - lo
        width = min(n, ngram)
        seed = fmix64(_U64(width) * _LEN_SALT)
        for w in range(win_off[d + 1] - win_off[d]):
            acc = seed
            for j in range(width):
                acc = acc * _POLY + unit_h[lo + w + j]
            out[win_off[d] + w] = _U32(fmix64(acc) >> _S32)
    return out, win_off
