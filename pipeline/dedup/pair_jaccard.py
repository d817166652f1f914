"""Exact Jaccard of many document pairs of one batch (docs/dedup.md, Verification), no Spark import.

With numba the batch is tokenised once by the compiled tokeniser (:mod:`.shingles_numba`) and every
pair is compared by :mod:`.pair_jaccard_numba` (sorted 64-bit shingle hashes, byte comparison on equal
hashes, so the value is exact). Documents with more distinct shingles than ``max_shingles`` (whose set
is the first ``max_shingles`` in document order) and the pure-Python backend use
:func:`pipeline.dedup.shingles.shingle_set`. Both give the same floats as
:func:`pipeline.dedup.jaccard.jaccard` on the two shingle sets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.dedup.numba_loader import compiled_kernels

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
    nb = compiled_kernels("pair_jaccard", text_size(texts))
    if nb is None:
        return _python_pairs(texts, a, b, ngram, shingle, max_shingles, np.ones(len(a), dtype=bool))
    cps, doc_off = _codepoints(texts)
    buf, lo, hi, unit_off = nb.shingles.utf8_units(cps, doc_off, nb.shingles.word_table(), shingle == "char")
    hashes, start, end, off = nb.pair_jaccard.distinct_shingles(buf, lo, hi, unit_off, ngram)
    out: np.ndarray = nb.pair_jaccard.pair_jaccards(buf, hashes, start, end, off, a, b)
    if max_shingles is not None:
        capped = np.diff(off) > max_shingles
        redo = capped[a] | capped[b]
        if redo.any():
            out[redo] = _python_pairs(texts, a, b, ngram, shingle, max_shingles, redo)[redo]
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
