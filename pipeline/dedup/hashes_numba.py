"""numba twin of the fast hash's K-gram windows in :mod:`pipeline.dedup.hashes`, one pass per batch.

The unit hashes come from :func:`pipeline.dedup.shingles_numba.unit_hashes`; the SHA-1 path has its own
kernels (:mod:`pipeline.dedup.sha1_numba`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.dedup import hash_mixers

_U32 = np.uint32
_U64 = np.uint64
_S32 = np.uint64(32)
_POLY = hash_mixers.WINDOW_MUL
_LEN_SALT = hash_mixers.WINDOW_LEN_SALT

fmix64 = njit(cache=True, nogil=True, inline="always")(hash_mixers.fmix64)  # the numpy kernels' own mixer


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
