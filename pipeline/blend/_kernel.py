"""The sequential "largest deficit" loop behind :func:`pipeline.blend.build_blending_indices`.

At step ``j`` the loop picks ``k = argmax_i (w_i * t_j - C_i)`` (first index on ties) with
``t_j = j + 1`` (fixed mode) or ``t_j = max(j, 1)`` (Megatron mode), records ``k`` and ``C_k``, then
increments ``C_k``. Every deficit is computed as the IEEE double expression ``w[i] * t - float(C[i])``
(multiply, round, subtract, round; no fused multiply-add), which is what megatron-core's C++ helper
does, so the choices agree bit for bit.

The rule is a smooth weighted round robin: the winner at a step depends on every earlier step, so the
steps run in order. One loop implements it: :mod:`pipeline.blend._kernel_lanes` (numpy, the same steps
vectorised across chunks), for any number of datasets. Its one compiled twin,
:func:`pipeline.blend._kernel_numba.fill_blocks`, takes over once a process has run ``LANES_AFTER`` units of
work on the lanes, counting this call (numba importable, ``PIPELINE_BLEND_NUMBA`` not ``0``): steps x
(datasets + ``LANE_STEP``), since a step on the lanes costs a fixed part plus a part per dataset, so that
the lanes keep the blends that end before loading the twin would pay; it scans only the datasets able to win
within a block of steps, the first four of them from locals (a blend of at most four datasets runs in
registers), and runs on while every dataset is a candidate. Both give identical arrays; the
twin's measured gain at stage level is in docs/benchmarks-history.md (Blend loop).
"""

from __future__ import annotations

import math

import numpy as np

from pipeline.blend._kernel_lanes import fill_lanes
from pipeline.numba_backend import BLEND

numba_enabled = BLEND.enabled
set_numba = BLEND.set

LANE_STEP = 16  # a step's fixed cost on the lanes, in datasets' worth of work
LANES_AFTER = 200_000_000  # work (steps x (datasets + LANE_STEP)) per process on the lanes before the twin loads


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
    if not BLEND.use("fill", (stop - start) * (n + LANE_STEP), after=LANES_AFTER):
        fill_lanes(w, counts, start, stop, fixed, out_index, out_sample, write)
        return
    # lazy: importing numba and loading (or compiling) the kernel is slow; the lanes never pay it
    from pipeline.blend import _kernel_numba as nb

    nb.fill_blocks(w, counts, start, stop, fixed, out_index, out_sample, write, block_length(n))
