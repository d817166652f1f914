"""numba twin of :mod:`pipeline.dedup.minhash`: MinHash signature matrices, one pass per batch.

Arithmetic is exactly datasketch 2.x's (see ``minhash.py``): numba widens uint32 operations to
uint64, so every 32-bit result is truncated explicitly with ``np.uint32(...)``; the legacy scheme
works in uint64 with wrap-around like numpy. Each document keeps its ``P`` running minima in its own
output row (1-2 KB, cache resident) while its shingles stream past.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.dedup import hash_mixers

_U32 = np.uint32
_U64 = np.uint64
_M61 = np.uint64((1 << 61) - 1)
_M32 = np.uint64(0xFFFFFFFF)
_S61 = np.uint64(61)

fmix32 = njit(cache=True, nogil=True, inline="always")(hash_mixers.fmix32)  # the numpy kernel's own mixer


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
