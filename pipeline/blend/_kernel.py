"""The sequential "largest deficit" loop behind :func:`pipeline.blend.build_blending_indices`.

At step ``j`` the loop picks ``k = argmax_i (w_i * t_j - C_i)`` (first index on ties) with
``t_j = j + 1`` (fixed mode) or ``t_j = max(j, 1)`` (Megatron mode), records ``k`` and ``C_k``, then
increments ``C_k``. Every deficit is computed as the IEEE double expression ``w[i] * t - float(C[i])``
(multiply, round, subtract, round; no fused multiply-add), which is what megatron-core's C++ helper
does, so the choices agree bit for bit.

The rule is a smooth weighted round robin: the winner at a step depends on every earlier step, so the
steps run in order. With numba (:mod:`pipeline.blend._kernel_numba`) up to 4 datasets live in
registers; up to ``_FEW_DATASETS`` every step scans all datasets (vectorised maximum, then its first
index); beyond that the steps run in blocks that scan only the datasets able to win within the block
(about ``4 * sqrt(n)`` per step instead of ``n``). Up to ``_FEW_DATASETS`` datasets a process runs its
first ``LANES_AFTER`` steps x datasets on numpy lanes (:mod:`pipeline.blend._kernel_lanes`, the same
steps vectorised across chunks), so a blend of a few million steps never imports numba. Beyond, without
numba, or with ``PIPELINE_BLEND_NUMBA=0`` (or :func:`set_numba`), the lanes (up to ``_FEW_DATASETS``) or a
Python loop over steps with numpy over datasets (O(S) interpreter iterations) give identical output.
"""

from __future__ import annotations

import math

import numpy as np

from pipeline.blend._kernel_lanes import fill_lanes
from pipeline.numba_backend import BLEND

numba_enabled = BLEND.enabled
set_numba = BLEND.set

_FEW_DATASETS = 64  # up to this many datasets, every step scans them all
# steps x datasets per process on the numpy lanes before numba's kernel (loading numba costs ~0.6 s, the
# lanes ~12 ns per step and dataset more than the compiled loop; docs/blending.md, Speed)
LANES_AFTER = 50_000_000


def _fill_numpy(
    w: np.ndarray,
    counts: np.ndarray,
    start: int,
    stop: int,
    fixed: bool,
    out_index: np.ndarray,
    out_sample: np.ndarray,
    write: bool,
) -> None:
    """Same contract as the compiled kernels; a per-step Python loop vectorised over datasets."""
    countf = counts.astype(np.float64)
    deficit = np.empty_like(w)
    for j in range(start, stop):
        t = float(j + 1) if fixed else max(float(j), 1.0)
        np.multiply(w, t, out=deficit)
        np.subtract(deficit, countf, out=deficit)
        k = int(np.argmax(deficit))  # first index of the maximum, like the strict ">" scan
        if write:
            out_index[j - start] = k
            out_sample[j - start] = counts[k]
        counts[k] += 1
        countf[k] += 1.0


def block_length(num_datasets: int) -> int:
    """Steps per block of the many-dataset kernel: ~sqrt(n) balances the O(n) block set-up."""
    return max(8, math.isqrt(num_datasets))


def fill(
    w: np.ndarray,
    counts: np.ndarray,
    start: int,
    stop: int,
    fixed: bool,
    out_index: np.ndarray | None,
    out_sample: np.ndarray | None,
) -> None:
    """Run steps ``start..stop-1`` from per-dataset ``counts`` (int64, updated in place).

    ``w`` is float64 with entries in [0, 1]. ``out_index``/``out_sample`` (int64) receive steps
    ``start..stop-1`` (length ``stop - start``); pass ``None`` for both to only advance ``counts``
    (used to get exact per-dataset demand cheaply).
    """
    write = out_index is not None
    if out_index is None or out_sample is None:
        out_index = np.empty(0, np.int16)
        out_sample = np.empty(0, np.int64)
    if stop <= start:
        return
    n = w.shape[0]
    if n <= _FEW_DATASETS and not BLEND.use("fill", (stop - start) * n, after=LANES_AFTER):
        fill_lanes(w, counts, start, stop, fixed, out_index, out_sample, write)
        return
    if not numba_enabled():
        _fill_numpy(w, counts, start, stop, fixed, out_index, out_sample, write)
        return
    # lazy: importing numba and loading (or compiling) the kernels costs seconds; the numpy path never pays it
    from pipeline.blend import _kernel_numba as nb

    if n <= 4:
        nb.fill_upto4(w, counts, start, stop, fixed, out_index, out_sample, write)
    elif n <= _FEW_DATASETS:
        nb.fill_few(w, counts, start, stop, fixed, out_index, out_sample, write)
    else:
        nb.fill_blocks(w, counts, start, stop, fixed, out_index, out_sample, write, block_length(n))
