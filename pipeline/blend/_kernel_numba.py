"""The compiled (numba) twin of the blend loop for many datasets; imported only when it is used.

It shares the contract of :func:`pipeline.blend._kernel.fill` and makes every choice from
the deficit ``w[i] * t - countf[i]`` computed as two IEEE double operations (no fused multiply-add:
"contract" is never among the fastmath flags), which is what megatron-core's C++ helper computes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

HEAD = 4  # candidates each step reads from locals (registers) rather than from the arrays
RUN_WORK = 1 << 16  # steps x datasets of a block in which every dataset is a candidate


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
    adapts so that ``k`` is a little above ``block``. When every dataset is a candidate nothing is
    excluded and the block runs on, up to ``RUN_WORK`` steps x datasets (a blend of few datasets is
    then one long run).

    Each step scans the candidates as a head of four held in locals (``HEAD``; unused places weigh 0
    and count +inf, deficit -inf, never picked) and the rest from the arrays: a blend of at most four
    datasets keeps its whole state in registers. The head is compared as a tournament in which the
    left side wins ties, the rest with a strict ``>`` in two interleaved chains (even and odd places,
    so that two maxima are in flight), merged with ties to the smaller place: the first index of the
    maximum wins.

    The step loop keeps ``t`` as a running double (``max(j + off, 1)`` covers both modes without a branch)
    and indexes arrays with unsigned integers, for which numba emits no negative-index wraparound.
    """
    n = w.shape[0]
    countf = counts.astype(np.float64)
    deficit = np.empty(n, np.float64)
    room = max(n, HEAD)
    cand = np.zeros(room, np.int64)
    cand_w = np.empty(room, np.float64)
    cand_c = np.empty(room, np.float64)
    below = 1.0  # how far under the maximum the threshold L sits; adapted per block
    biggest = w.max() * step_time(stop, fixed) + countf.max() + (stop - start) + 1.0
    margin = 1e-12 * biggest  # >> 2 evaluations * 3 roundings * 2**-53 * biggest
    off = 1.0 if fixed else 0.0  # step_time(j, fixed) == max(j + off, 1.0) for every j >= 0
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
        for i in range(n):  # without branches: place i is overwritten unless it is a candidate
            d = deficit[i]
            above += d >= threshold
            cand[c] = i
            cand_w[c] = w[i]
            cand_c[c] = countf[i]
            c += d + w[i] * span + margin >= threshold
        for q in range(c, HEAD):
            cand_w[q] = 0.0
            cand_c[q] = np.inf
        below *= min(2.0, max(0.5, (block + 0.25 * block + 1.0) / above))
        below = max(below, 1e-9)
        steps = min(stop - j, max(block, RUN_WORK // n)) if c == n else min(steps, above)
        w0, w1, w2, w3 = cand_w[0], cand_w[1], cand_w[2], cand_w[3]
        c0, c1, c2, c3 = cand_c[0], cand_c[1], cand_c[2], cand_c[3]
        tj = float(j) + off  # exact: integers below 2**53
        for p in range(j - start, j - start + steps):  # p: the step's place in the outputs
            t = max(tj, 1.0)
            tj += 1.0
            d0, d1, d2, d3 = w0 * t - c0, w1 * t - c1, w2 * t - c2, w3 * t - c3
            left, left_d = (0, d0) if d0 >= d1 else (1, d1)
            right, right_d = (2, d2) if d2 >= d3 else (3, d3)
            b, best = (left, left_d) if left_d >= right_d else (right, right_d)
            if c > HEAD:  # the rest as two chains of maxima (places HEAD, HEAD + 2, ... and HEAD + 1, ...)
                odd, odd_best = c, -np.inf
                for i in range(HEAD, c - 1, 2):
                    u, v = np.uint64(i), np.uint64(i + 1)
                    d = cand_w[u] * t - cand_c[u]
                    e = cand_w[v] * t - cand_c[v]
                    more = d > best
                    best = d if more else best
                    b = i if more else b
                    more = e > odd_best
                    odd_best = e if more else odd_best
                    odd = i + 1 if more else odd
                if (c - HEAD) & 1:
                    u = np.uint64(c - 1)
                    d = cand_w[u] * t - cand_c[u]
                    more = d > best
                    best = d if more else best
                    b = c - 1 if more else b
                more = (odd_best > best) | ((odd_best == best) & (odd < b))
                b = odd if more else b
            taken = c0 if b == 0 else (c1 if b == 1 else (c2 if b == 2 else c3))
            c0 = c0 + 1.0 if b == 0 else c0
            c1 = c1 + 1.0 if b == 1 else c1
            c2 = c2 + 1.0 if b == 2 else c2
            c3 = c3 + 1.0 if b == 3 else c3
            if b >= HEAD:
                taken = cand_c[np.uint64(b)]
                cand_c[np.uint64(b)] = taken + 1.0
            if write:
                out_index[np.uint64(p)] = cand[np.uint64(b)]
                out_sample[np.uint64(p)] = np.int64(taken)
        j += steps
        cand_c[0], cand_c[1], cand_c[2], cand_c[3] = c0, c1, c2, c3
        for q in range(c):
            countf[np.uint64(cand[q])] = cand_c[q]
    for i in range(n):
        counts[i] = np.int64(countf[i])
