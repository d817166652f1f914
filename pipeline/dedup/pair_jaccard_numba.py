"""numba kernels: exact Jaccard of shingle sets for many document pairs of one batch

Input is :func:`pipeline.dedup.shingles_numba.utf8_units`' layout: the UTF-8 bytes of every document's
units back to back in ``buf``, unit ``u`` at ``buf[lo[u]:hi[u]]``. A shingle is the byte range from
a window's first unit start to its last unit end, exactly the bytes :func:`pipeline.dedup.shingles.shingles`
builds. Each shingle gets a 64-bit FNV-1a hash; per document the shingles are sorted by hash and
repeats dropped. Equal hashes are only candidates: two shingles are the same when their bytes are,
so the result is exact whatever the hash collides on (collisions cost a byte comparison, nothing more).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.dedup.shingles_numba import same_bytes as _same_bytes

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True)
def _fnv1a(buf: np.ndarray, lo: int, hi: int) -> np.uint64:
    h: np.uint64 = _FNV_OFFSET
    for i in range(lo, hi):
        h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def window_counts(unit_off: np.ndarray, ngram: int) -> np.ndarray:
    """K-gram windows per document (one window of all units when it has fewer than K, none when it has none)."""
    n_docs = unit_off.shape[0] - 1
    counts = np.empty(n_docs, dtype=np.int64)
    for d in range(n_docs):
        n = unit_off[d + 1] - unit_off[d]
        counts[d] = n - ngram + 1 if n >= ngram else min(n, 1)
    return counts


@njit(cache=True, nogil=True)
def distinct_shingles(
    buf: np.ndarray, lo: np.ndarray, hi: np.ndarray, unit_off: np.ndarray, ngram: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each document's distinct shingles sorted by hash: ``(hash, start, end, offsets per document)``."""
    return distinct_shingles_upto(buf, lo, hi, unit_off, ngram, window_counts(unit_off, ngram))


@njit(cache=True, nogil=True)
def distinct_shingles_upto(
    buf: np.ndarray, lo: np.ndarray, hi: np.ndarray, unit_off: np.ndarray, ngram: int, limits: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`distinct_shingles` of each document's first ``limits[d]`` windows only (at most all of them)."""
    n_docs = unit_off.shape[0] - 1
    win_off = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        win_off[d + 1] = win_off[d] + limits[d]
    total = win_off[n_docs]
    hashes = np.empty(total, dtype=np.uint64)
    start = np.empty(total, dtype=np.int64)
    end = np.empty(total, dtype=np.int64)
    out_off = np.zeros(n_docs + 1, dtype=np.int64)
    kept = 0
    for d in range(n_docs):
        first, base = unit_off[d], win_off[d]
        width = min(unit_off[d + 1] - first, ngram)
        count = win_off[d + 1] - base
        h = np.empty(count, dtype=np.uint64)
        for k in range(count):
            h[k] = _fnv1a(buf, lo[first + k], hi[first + k + width - 1])
        order = np.argsort(h, kind="mergesort")
        run_begin = kept
        for j in range(count):
            k = order[j]
            s, e = lo[first + k], hi[first + k + width - 1]
            if kept > run_begin and hashes[kept - 1] != h[k]:
                run_begin = kept
            repeat = False
            for m in range(run_begin, kept):  # earlier shingles with this hash
                if _same_bytes(buf, start[m], end[m], s, e):
                    repeat = True
                    break
            if not repeat:
                hashes[kept], start[kept], end[kept] = h[k], s, e
                kept += 1
        out_off[d + 1] = kept
    # views, not copies: most shingles are distinct, and copying ~24 bytes per shingle cost 17% of the kernel
    return hashes[:kept], start[:kept], end[:kept], out_off


@njit(cache=True, nogil=True)
def pair_jaccards(
    buf: np.ndarray,
    hashes: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    off: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
) -> np.ndarray:
    """Exact Jaccard of documents ``a[i]`` and ``b[i]`` (two empty sets count as 1.0)."""
    out = np.empty(a.shape[0], dtype=np.float64)
    for p in range(a.shape[0]):
        i, i_end, j, j_end = off[a[p]], off[a[p] + 1], off[b[p]], off[b[p] + 1]
        size = (i_end - i) + (j_end - j)
        inter = 0
        while i < i_end and j < j_end:
            if hashes[i] < hashes[j]:
                i += 1
            elif hashes[i] > hashes[j]:
                j += 1
            else:  # runs of one hash on both sides: count byte-equal pairs (each side is distinct)
                h = hashes[i]
                i_run = i
                while i_run < i_end and hashes[i_run] == h:
                    i_run += 1
                j_run = j
                while j_run < j_end and hashes[j_run] == h:
                    j_run += 1
                for x in range(i, i_run):
                    for y in range(j, j_run):
                        if _same_bytes(buf, start[x], end[x], start[y], end[y]):
                            inter += 1
                            break
                i, j = i_run, j_run
        union = size - inter
        out[p] = 1.0 if union == 0 else inter / union
    return out
