"""Compiled (numba) blend loops; imported only when the blend numba backend is on.

All loops share one contract (see :func:`pipeline.blend._kernel.fill`) and make every choice from
the deficit ``w[i] * t - countf[i]`` computed as two IEEE double operations (no fused multiply-add:
"contract" is never among the fastmath flags), which is what megatron-core's C++ helper computes.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def step_time(j, fixed):  # noqa: ANN001, ANN201
    """t at step j: ``j + 1`` (fixed mode) or Megatron's ``max(j, 1)``."""
    if fixed:
        return float(j + 1)
    return max(float(j), 1.0)


@njit(cache=True, nogil=True, fastmath={"nnan", "ninf", "nsz"})
def fill_deficits_max(w, countf, t, deficit, n):  # noqa: ANN001, ANN201
    """Fill ``deficit[:n]`` and return its maximum (relaxed flags only so that the max vectorises)."""
    for i in range(n):
        deficit[i] = w[i] * t - countf[i]
    m = deficit[0]
    for i in range(1, n):
        m = max(m, deficit[i])
    return m


@njit(cache=True, nogil=True)
def fill_upto4(w, counts, start, stop, fixed, out_index, out_sample, write):  # noqa: ANN001, ANN201, PLR0912
    """At most 4 datasets, all state in registers; missing ones get deficit -inf (never picked)."""
    n = w.shape[0]
    w0, c0 = w[0], float(counts[0])
    w1, c1 = (w[1], float(counts[1])) if n > 1 else (0.0, np.inf)
    w2, c2 = (w[2], float(counts[2])) if n > 2 else (0.0, np.inf)
    w3, c3 = (w[3], float(counts[3])) if n > 3 else (0.0, np.inf)
    for j in range(start, stop):
        t = step_time(j, fixed)
        d0, d1, d2, d3 = w0 * t - c0, w1 * t - c1, w2 * t - c2, w3 * t - c3
        low, low_d = (0, d0) if d0 >= d1 else (1, d1)  # ties go to the smaller index
        high, high_d = (2, d2) if d2 >= d3 else (3, d3)
        k = low if low_d >= high_d else high
        if k == 0:
            taken, c0 = c0, c0 + 1.0
        elif k == 1:
            taken, c1 = c1, c1 + 1.0
        elif k == 2:
            taken, c2 = c2, c2 + 1.0
        else:
            taken, c3 = c3, c3 + 1.0
        if write:
            out_index[j - start] = k
            out_sample[j - start] = np.int64(taken)
    counts[0] = np.int64(c0)
    if n > 1:
        counts[1] = np.int64(c1)
    if n > 2:
        counts[2] = np.int64(c2)
    if n > 3:
        counts[3] = np.int64(c3)


@njit(cache=True, nogil=True)
def fill_few(w, counts, start, stop, fixed, out_index, out_sample, write):  # noqa: ANN001, ANN201
    """Every step scans all datasets: the maximum (exact in any order), then its first index."""
    n = w.shape[0]
    countf = counts.astype(np.float64)
    deficit = np.empty(n, np.float64)
    for j in range(start, stop):
        m = fill_deficits_max(w, countf, step_time(j, fixed), deficit, n)
        k = 0
        while deficit[k] != m:
            k += 1
        if write:
            out_index[j - start] = k
            out_sample[j - start] = np.int64(countf[k])
        countf[k] += 1.0
    for i in range(n):
        counts[i] = np.int64(countf[i])


@njit(cache=True, nogil=True)
def fill_blocks(w, counts, start, stop, fixed, out_index, out_sample, write, block):  # noqa: ANN001, ANN201, PLR0912, PLR0915
    """Steps in blocks, each scanning only the datasets that can win within the block.

    At a block's first step (time ``t0``) with deficits ``d`` and a threshold ``L``, let ``k`` be the
    number of datasets with ``d_i >= L``. During the next ``k`` steps one of them is still unpicked,
    and its computed deficit never decreases while ``t`` grows (rounding is monotone), so the maximum
    stays ``>= L``. A dataset with ``d_i + w_i * (t_end - t0) + margin < L`` therefore cannot win
    before ``t_end`` (``margin`` bounds the rounding of two evaluations, whose operands never exceed
    ``w_max * t + max count``). The block runs ``min(k, block)`` steps over the others (in index
    order, so ties still go to the smaller index); ``L`` sits a distance below the maximum that
    adapts so that ``k`` is a little above ``block``.
    """
    n = w.shape[0]
    countf = counts.astype(np.float64)
    deficit = np.empty(n, np.float64)
    cand = np.empty(n, np.int64)
    cand_w = np.empty(n, np.float64)
    cand_c = np.empty(n, np.float64)
    cand_d = np.empty(n, np.float64)
    below = 1.0  # how far under the maximum the threshold L sits; adapted per block
    biggest = w.max() * step_time(stop, fixed) + countf.max() + (stop - start) + 1.0
    margin = 1e-12 * biggest  # >> 2 evaluations * 3 roundings * 2**-53 * biggest
    j = start
    while j < stop:
        t0 = step_time(j, fixed)
        top = fill_deficits_max(w, countf, t0, deficit, n)
        threshold = top - below
        steps = min(block, stop - j)
        t_end = step_time(j + steps - 1, fixed)
        span = t_end - t0
        above = 0
        c = 0
        for i in range(n):
            d = deficit[i]
            if d >= threshold:
                above += 1
            if d + w[i] * span + margin >= threshold:
                cand[c] = i
                cand_w[c] = w[i]
                cand_c[c] = countf[i]
                c += 1
        below *= min(2.0, max(0.5, (block + 0.25 * block + 1.0) / above))
        below = max(below, 1e-9)
        steps = min(steps, above)
        for _ in range(steps):
            best = fill_deficits_max(cand_w, cand_c, step_time(j, fixed), cand_d, c)
            b = 0
            while cand_d[b] != best:
                b += 1
            if write:
                out_index[j - start] = cand[b]
                out_sample[j - start] = np.int64(cand_c[b])
            cand_c[b] += 1.0
            j += 1
        for q in range(c):
            countf[cand[q]] = cand_c[q]
    for i in range(n):
        counts[i] = np.int64(countf[i])
