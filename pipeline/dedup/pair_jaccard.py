"""Exact Jaccard of many document pairs of one batch (docs/dedup.md, Verification), no Spark import.

With numba the batch is tokenised once by the compiled tokeniser (:mod:`.shingles_numba`) and every
pair is compared by :mod:`.pair_jaccard_numba` (sorted 64-bit shingle hashes, byte comparison on equal
hashes, so the value is exact). A document with more windows than ``max_shingles`` (whose set is its first
``max_shingles`` distinct shingles in document order) is cut after the window where the last of them first
occurs (``shingles_numba.first_distinct_windows``). The pure-Python backend uses
:func:`pipeline.dedup.shingles.shingle_set`. Both give the same floats as
:func:`pipeline.dedup.jaccard.jaccard` on the two shingle sets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.dedup.numba_loader import DedupKernels, compiled_kernels, ensure_compiled

from .hashes import _codepoints, text_size
from .jaccard import jaccard
from .shingles import check_shingle_params, shingle_set


def pair_jaccards(
    texts: Sequence[str],
    a: np.ndarray,
    b: np.ndarray,
    ngram: int = 5,
    shingle: str = "word",
    max_shingles: int | None = None,
) -> np.ndarray:
    """float64 Jaccard of the shingle sets of ``texts[a[i]]`` and ``texts[b[i]]`` for every i."""
    check_shingle_params(ngram, shingle, max_shingles)
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {a.shape} and {b.shape}")
    if not len(a):
        return np.zeros(0, dtype=np.float64)
    nb = compiled_kernels("pair_jaccard", text_size(texts), "pair_jaccard")
    if nb is None:
        return _python_pairs(texts, a, b, ngram, shingle, max_shingles, np.ones(len(a), dtype=bool))
    cps, doc_off = _codepoints(texts)
    buf, lo, hi, unit_off = nb.shingles.utf8_units(cps, doc_off, nb.shingles.word_table(), shingle == "char")
    limits = nb.pair_jaccard.window_counts(unit_off, ngram)
    if max_shingles is not None and (limits > max_shingles).any():
        limits = _capped_limits(nb, buf, lo, hi, unit_off, limits, ngram, max_shingles)
    hashes, start, end, off = nb.pair_jaccard.distinct_shingles_upto(buf, lo, hi, unit_off, ngram, limits)
    out: np.ndarray = nb.pair_jaccard.pair_jaccards(buf, hashes, start, end, off, a, b)
    return out


def _capped_limits(
    nb: DedupKernels,
    buf: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    unit_off: np.ndarray,
    limits: np.ndarray,
    ngram: int,
    cap: int,
) -> np.ndarray:
    """``limits`` (windows per document) with each document over ``cap`` cut after the window where its
    ``cap``-th distinct shingle first occurs: the distinct shingles of that prefix are its first ``cap``."""
    ensure_compiled("cap")
    over = np.flatnonzero(limits > cap)
    sub_lo = np.concatenate([lo[unit_off[d] : unit_off[d + 1]] for d in over])
    sub_hi = np.concatenate([hi[unit_off[d] : unit_off[d + 1]] for d in over])
    sub_off = np.zeros(len(over) + 1, dtype=np.int64)
    np.cumsum(unit_off[over + 1] - unit_off[over], out=sub_off[1:])
    keys, win_off = nb.sha1.sha1_windows(buf, sub_lo, sub_hi, sub_off, ngram)
    keep = nb.shingles.first_distinct_windows(buf, sub_lo, sub_hi, sub_off, win_off, keys, ngram, cap)
    out: np.ndarray = limits.copy()
    for i, d in enumerate(over.tolist()):
        out[d] = int(np.flatnonzero(keep[win_off[i] : win_off[i + 1]])[-1]) + 1
    return out


def _python_pairs(
    texts: Sequence[str],
    a: np.ndarray,
    b: np.ndarray,
    ngram: int,
    shingle: str,
    max_shingles: int | None,
    which: np.ndarray,
) -> np.ndarray:
    """The pairs selected by ``which`` with Python shingle sets (each document's set built once)."""
    sets: dict[int, frozenset[bytes]] = {}

    def set_of(i: int) -> frozenset[bytes]:
        if i not in sets:
            sets[i] = shingle_set(texts[i], ngram, shingle, max_shingles)
        return sets[i]

    out = np.zeros(len(a), dtype=np.float64)
    for p in np.flatnonzero(which).tolist():
        out[p] = jaccard(set_of(int(a[p])), set_of(int(b[p])))
    return out
