"""Blending indices (docs/blending.md, The rule): which dataset, and which sample of it, fills each blended slot.

``build_blending_indices(weights, size)`` returns ``(dataset_index, dataset_sample_index)`` of length
``S = size``: at step ``j`` pick ``k = argmax_i (w_i * (j + 1) - C_i)`` (ties to the smaller ``i``),
then ``dataset_index[j] = k``, ``dataset_sample_index[j] = C_k`` and ``C_k += 1``; weights are
normalised to sum 1 (``w / w.sum()`` in float64, as megatron-core does).

Modes:

* ``"fixed"`` (default): ``t = j + 1``; ``dataset_index`` is uint8 for up to 255 datasets, int16 up to
  32767, int32 beyond; with ``sizes`` a dataset asked for more samples than it has either fails
  before any array is built (``oversample="error"``) or wraps (``"wrap"``: sample % size).
* ``"megatron"``: megatron-core 0.16.1's ``helpers.build_blending_indices`` bit for bit, including
  ``t = max(j, 1)`` (the first two steps share t = 1); int16 dataset index, at most 32766 datasets.

Complexity: equal weights are round robin, O(S) vectorised numpy with no loop. Otherwise the loop over
the S steps on numpy lanes (chunks of steps run side by side, verified by chaining; about ``S * n * 1.1``
element operations plus ``~2 * sqrt(S)`` numpy calls per operation, the temporaries bounded per segment of
2^22 steps), and, once a process has run ``_kernel.LANES_AFTER`` units of steps x (datasets + 16), its compiled
twin (numba), scanning about ``4 * sqrt(n)`` datasets per step with O(n) extra memory beyond the
two output arrays (``S * (itemsize + 8)`` bytes), written in their final dtypes; see
:mod:`pipeline.blend._kernel` (``PIPELINE_BLEND_NUMBA=0``: the lanes only). Oversample checks cost O(n) when
the demand is clear-cut and one extra counting pass (no arrays) when it is within ``n`` samples of a size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.blend import _kernel
from pipeline.errors import UsageError

MODES = ("fixed", "megatron")
OVERSAMPLE = ("error", "wrap")
MEGATRON_MAX_DATASETS = 32766  # megatron-core asserts len(datasets) < 32767


class OversampleError(UsageError, ValueError):
    """A dataset would be asked for more samples than it holds (``oversample="error"``)."""


def index_dtype(num_datasets: int, mode: str = "fixed") -> np.dtype:
    """dtype of ``dataset_index``: int16 in Megatron mode; else uint8 / int16 / int32 by count."""
    if mode == "megatron":
        return np.dtype(np.int16)
    if num_datasets <= 255:
        return np.dtype(np.uint8)
    if num_datasets <= 32767:
        return np.dtype(np.int16)
    return np.dtype(np.int32)


def normalize_weights(weights: Sequence[float] | np.ndarray) -> np.ndarray:
    """Validate weights (finite, >= 0, positive sum) and return ``w / w.sum()`` as float64."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights must be a non-empty 1-D sequence, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"weights must be finite and >= 0, got {w.tolist()}")
    total = float(w.sum())
    if total <= 0:
        raise ValueError("weights must not all be zero")
    normalized: np.ndarray = w / total
    return normalized


def _check_args(
    w: np.ndarray, size: int, sizes: Sequence[int] | np.ndarray | None, mode: str, oversample: str
) -> np.ndarray | None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if oversample not in OVERSAMPLE:
        raise ValueError(f"oversample must be one of {OVERSAMPLE}, got {oversample!r}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"size must be an integer >= 0, got {size!r}")
    if mode == "megatron":
        if w.size > MEGATRON_MAX_DATASETS:
            raise ValueError(f"mode='megatron' supports at most {MEGATRON_MAX_DATASETS} datasets")
        if np.any(w <= 0):
            raise ValueError("mode='megatron' needs every weight > 0 (as megatron-core asserts)")
    if sizes is None:
        return None
    n_arr = np.asarray(sizes)
    if n_arr.shape != w.shape or not np.issubdtype(n_arr.dtype, np.integer) or np.any(n_arr < 0):
        raise ValueError(f"sizes must be {w.size} integers >= 0 (one per dataset), got {sizes!r}")
    return n_arr.astype(np.int64)


def _label(i: int, names: Sequence[str] | None) -> str:
    return f"dataset {i} ({names[i]!r})" if names is not None else f"dataset {i}"


def _raise_oversample(
    over: dict[int, str], sizes: np.ndarray, size: int, w: np.ndarray, names: Sequence[str] | None
) -> None:
    parts = [
        f"{_label(i, names)} has {sizes[i]} samples but a blend of S={size} at weight {w[i]:.6g} asks it for {demand}"
        for i, demand in over.items()
    ]
    raise OversampleError(
        "; ".join(parts) + ". Pass oversample='wrap' to reuse samples (sample % size), "
        "or lower the weight or S, or add data."
    )


def _check_demand(
    w: np.ndarray, size: int, sizes: np.ndarray, fixed: bool, names: Sequence[str] | None, wrap: bool
) -> None:
    """Fail before building when a dataset's demand exceeds its size (exact, see module doc).

    Bounds: a dataset is picked only when its deficit is the maximum, which is >= the mean >= 0,
    so ``C_i <= w_i * S + 1``; since the counts sum to S, ``C_i >= w_i * S - (n - 1)``.
    """
    n = w.size
    expected = w * size
    slack = 1e-9 * max(1.0, float(size))  # float rounding of the deficits
    hi = np.floor(expected + 1 + slack).astype(np.int64)
    lo = np.ceil(expected - (n - 1) - slack).astype(np.int64)
    if wrap:
        empty = [i for i in range(n) if sizes[i] == 0 and hi[i] > 0]
        if not empty:
            return
        counts = np.zeros(n, np.int64)
        _kernel.fill(w, counts, 0, size, fixed, None, None)
        bad = {i: f"{counts[i]} (an empty dataset cannot wrap)" for i in empty if counts[i] > 0}
        if bad:
            _raise_oversample(bad, sizes, size, w, names)
        return
    certain = {
        i: f"at least {max(lo[i], sizes[i] + 1)} (about {expected[i]:.1f})" for i in range(n) if lo[i] > sizes[i]
    }
    if certain:
        _raise_oversample(certain, sizes, size, w, names)
    if np.all(hi <= sizes):
        return
    counts = np.zeros(n, np.int64)  # close call: count exactly, without building any array
    _kernel.fill(w, counts, 0, size, fixed, None, None)
    over = {i: str(counts[i]) for i in range(n) if counts[i] > sizes[i]}
    if over:
        _raise_oversample(over, sizes, size, w, names)


def _round_robin(n: int, size: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Equal weights: step j takes dataset j % n, sample j // n (both modes), with no loop."""
    dataset_index = np.resize(np.arange(n, dtype=dtype), size)
    dataset_sample_index = np.arange(size, dtype=np.int64)
    np.floor_divide(dataset_sample_index, n, out=dataset_sample_index)
    return dataset_index, dataset_sample_index


def build_blending_indices(
    weights: Sequence[float] | np.ndarray,
    size: int,
    sizes: Sequence[int] | np.ndarray | None = None,
    mode: str = "fixed",
    oversample: str = "error",
    *,
    names: Sequence[str] | None = None,
    chunk: int = 1 << 22,
    as_given: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Build ``(dataset_index, dataset_sample_index)`` of length ``size`` (see module doc).

    ``sizes`` (samples per dataset) enables the oversample policy; ``names`` only labels errors;
    ``chunk`` bounds the sample-wrapping temporaries. ``dataset_sample_index`` is int64. ``as_given``
    uses weights that already sum to about 1 without normalising them again, as megatron-core's
    BlendedDataset hands its normalised list to the helper (a second ``w / w.sum()`` may move a bit).
    """
    w = normalize_weights(weights)
    if as_given:
        w = np.asarray(weights, dtype=np.float64)
    n = w.size
    size_arr = _check_args(w, size, sizes, mode, oversample)
    size = int(size)
    if names is not None and len(names) != n:
        raise ValueError(f"names must have {n} entries, got {len(names)}")
    fixed = mode == "fixed"
    if size_arr is not None:
        _check_demand(w, size, size_arr, fixed, names, wrap=oversample == "wrap")
    dtype = index_dtype(n, mode)
    if np.all(w == w[0]):
        dataset_index, dataset_sample_index = _round_robin(n, size, dtype)
    else:
        dataset_index = np.empty(size, dtype=dtype)
        dataset_sample_index = np.empty(size, dtype=np.int64)
        _kernel.fill(w, np.zeros(n, np.int64), 0, size, fixed, dataset_index, dataset_sample_index)
    if size_arr is not None and oversample == "wrap":
        safe = np.maximum(size_arr, 1)  # empty datasets were proven unused by _check_demand
        for lo in range(0, size, chunk):
            part = dataset_sample_index[lo : lo + chunk]
            np.remainder(part, safe[dataset_index[lo : lo + chunk]], out=part)
    return dataset_index, dataset_sample_index


def dataset_counts(dataset_index: np.ndarray, num_datasets: int, chunk: int = 1 << 22) -> np.ndarray:
    """Samples each dataset contributes to the blend (int64, length ``num_datasets``), in chunks."""
    counts = np.zeros(num_datasets, dtype=np.int64)
    for lo in range(0, len(dataset_index), chunk):
        counts += np.bincount(dataset_index[lo : lo + chunk], minlength=num_datasets)[:num_datasets]
    return counts


def achieved_ratios(dataset_index: np.ndarray, num_datasets: int) -> np.ndarray:
    """Fraction of the blend each dataset fills (float64; zeros for an empty blend)."""
    counts = dataset_counts(dataset_index, num_datasets)
    total = counts.sum()
    return counts / total if total else np.zeros(num_datasets, dtype=np.float64)
