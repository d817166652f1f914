"""The compiled (numba) twin of the blend loop for many datasets; imported only when it is used.

It shares the contract of :func:`pipeline.blend._kernel.fill` and makes every choice from
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
