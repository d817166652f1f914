"""Exact and estimated Jaccard similarity (exact is used to verify candidate edges, docs/dedup.md, Verification)."""

from __future__ import annotations

from collections.abc import Set

import numpy as np

from .shingles import shingle_set


def jaccard(a: Set[object], b: Set[object]) -> float:
    """Exact Jaccard |a & b| / |a | b| of two sets; two empty sets count as identical (1.0)."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def text_jaccard(
    text_a: str, text_b: str, ngram: int = 5, shingle: str = "word", max_shingles: int | None = None
) -> float:
    """Exact Jaccard of two documents' shingle sets."""
    return jaccard(shingle_set(text_a, ngram, shingle, max_shingles), shingle_set(text_b, ngram, shingle, max_shingles))


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float | np.ndarray:
    """MinHash estimate: the fraction of equal positions along the last axis (broadcasts over rows)."""
    sig_a, sig_b = np.asarray(sig_a), np.asarray(sig_b)
    if sig_a.shape[-1] != sig_b.shape[-1]:
        raise ValueError("signatures have different numbers of permutations")
    agreement: float | np.ndarray = np.mean(sig_a == sig_b, axis=-1)
    return agreement
