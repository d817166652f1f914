"""LSH banding (docs/dedup.md, Banding): choosing (B, R) from the S-curve, and 64-bit band keys."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pipeline.dedup.hash_mixers import BAND_SALT as _BAND_SALT
from pipeline.dedup.hash_mixers import fmix64


def candidate_probability(s: float | np.ndarray, bands: int, rows: int) -> float | np.ndarray:
    """Probability that two documents of Jaccard ``s`` share at least one band: 1 - (1 - s^R)^B."""
    return 1.0 - (1.0 - np.asarray(s, dtype=np.float64) ** rows) ** bands


@lru_cache(maxsize=8)
def _gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(n)


@lru_cache(maxsize=256)
def optimal_bands(
    threshold: float,
    num_perm: int,
    false_positive_weight: float = 0.5,
    false_negative_weight: float = 0.5,
) -> tuple[int, int]:
    """(B, R) with B*R <= num_perm minimising the weighted false-positive and false-negative areas.

    FP(B, R) = integral over [0, T] of 1 - (1 - s^R)^B, FN = integral over [T, 1] of (1 - s^R)^B,
    the same objective and the same scan order (B ascending, then R; first minimum wins) as
    datasketch's ``_optimal_param``. The integrands are polynomials of degree B*R <= num_perm, so
    Gauss-Legendre with num_perm//2 + 1 nodes integrates them exactly (up to rounding): no scipy.
    """
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be in (0, 1), got {threshold}")
    if num_perm < 1:
        raise ValueError(f"num_perm must be positive, got {num_perm}")
    x, w = _gauss_legendre(num_perm // 2 + 1)
    lo_s, lo_w = threshold * (x + 1) / 2, w * threshold / 2  # nodes on [0, T]
    hi_s, hi_w = threshold + (1 - threshold) * (x + 1) / 2, w * (1 - threshold) / 2  # on [T, 1]
    r_all = np.arange(1, num_perm + 1, dtype=np.float64)[:, None]
    lo_pow, hi_pow = lo_s[None, :] ** r_all, hi_s[None, :] ** r_all  # [r-1, node] = s^r
    best, best_err = (0, 0), np.inf
    for b in range(1, num_perm + 1):
        max_r = num_perm // b
        fp = (1.0 - (1.0 - lo_pow[:max_r]) ** b) @ lo_w
        fn = ((1.0 - hi_pow[:max_r]) ** b) @ hi_w
        err = fp * false_positive_weight + fn * false_negative_weight
        i = int(np.argmin(err))
        if err[i] < best_err:
            best, best_err = (b, i + 1), float(err[i])
    return best


def band_keys(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """A 64-bit hash of each band's ``rows`` values: uint64 array ``(n, bands)``.

    Band ``j`` covers signature columns ``[j*rows, (j+1)*rows)``; columns past ``bands*rows`` are
    ignored. The band index is mixed in, so equal values in different bands give different keys.
    uint32 signatures are packed two values per 64-bit lane before mixing (lossless).
    """
    sig = np.asarray(signatures)
    if sig.ndim != 2 or sig.dtype not in (np.uint32, np.uint64):
        raise ValueError("signatures must be a 2-D uint32 or uint64 array")
    if bands < 1 or rows < 1 or bands * rows > sig.shape[1]:
        raise ValueError(f"bands*rows = {bands}*{rows} exceeds num_perm = {sig.shape[1]}")
    n = sig.shape[0]
    block = sig[:, : bands * rows].reshape(n, bands, rows)
    if sig.dtype == np.uint32:
        lanes = [block[:, :, j].astype(np.uint64) for j in range(rows)]
        lanes = [lanes[j] | (lanes[j + 1] << np.uint64(32)) if j + 1 < rows else lanes[j] for j in range(0, rows, 2)]
    else:
        lanes = [block[:, :, j] for j in range(rows)]
    band_index = np.arange(bands, dtype=np.uint64)
    acc = np.broadcast_to(fmix64((band_index + np.uint64(1)) * _BAND_SALT), (n, bands))
    salts = np.arange(1, len(lanes) + 1, dtype=np.uint64) * _BAND_SALT  # array ops wrap silently
    for lane, salt in zip(lanes, salts, strict=True):
        acc = fmix64(acc ^ lane) + salt
    return fmix64(acc)
