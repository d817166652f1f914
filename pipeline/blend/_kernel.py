"""The sequential "largest deficit" loop behind :func:`pipeline.blend.build_blending_indices`.

At step ``j`` the loop picks ``k = argmax_i (w_i * t_j - C_i)`` (first index on ties) with
``t_j = j + 1`` (fixed mode) or ``t_j = max(j, 1)`` (Megatron mode), records ``k`` and ``C_k``, then
increments ``C_k``. Every deficit is computed as the IEEE double expression ``w[i] * t - float(C[i])``
(multiply, round, subtract, round; no fused multiply-add), which is what megatron-core's C++ helper
does, so the choices agree bit for bit.

The rule is a smooth weighted round robin: the winner at a step depends on every earlier step, and no
ordering of (dataset, count) events by a fixed key reproduces it for more than two datasets (checked
against the reference on random cases), so the work is inherently O(S * n) comparisons. It runs as a
compiled loop when ``numba`` imports (about as fast as megatron-core's C++ helper; faster for few
datasets because the argmax is done as a vectorisable max-then-find), and otherwise as a Python loop
over steps with numpy over datasets (O(S) interpreter iterations: fine for S up to ~10^6).
"""

from __future__ import annotations

import numpy as np

try:  # numba is optional: it makes the loop compiled
    import numba as _numba
except Exception:  # pragma: no cover - exercised only where numba is missing or broken
    _numba = None

HAVE_NUMBA = _numba is not None

# Datasets at or below this count use the two-pass (max, then first index) argmax.
_TWO_PASS_MAX_DATASETS = 64


def _fill_py(w, counts, start, stop, fixed, out_index, out_sample, write):  # noqa: ANN001
    """Same contract as the compiled kernel; a per-step Python loop vectorised over datasets."""
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


def _fill_nb_scalar(w, counts, start, stop, fixed, out_index, out_sample, write):  # noqa: ANN001
    """Compiled single-pass scan, as in megatron-core: keep the first strictly larger deficit."""
    n = w.shape[0]
    countf = np.empty(n, np.float64)
    for i in range(n):
        countf[i] = float(counts[i])
    for j in range(start, stop):
        t = float(j + 1) if fixed else max(float(j), 1.0)
        best = w[0] * t - countf[0]
        k = 0
        for i in range(1, n):
            e = w[i] * t - countf[i]
            if e > best:
                best = e
                k = i
        if write:
            out_index[j - start] = k
            out_sample[j - start] = counts[k]
        counts[k] += 1
        countf[k] += 1.0


def _max_deficit(w, countf, t, deficit):  # noqa: ANN001
    """Fill ``deficit`` and return its maximum (compiled with no-NaN flags so it vectorises)."""
    n = w.shape[0]
    for i in range(n):
        deficit[i] = w[i] * t - countf[i]
    m = deficit[0]
    for i in range(1, n):
        m = max(m, deficit[i])
    return m


def _fill_nb_two_pass(w, counts, start, stop, fixed, out_index, out_sample, write):  # noqa: ANN001
    """Compiled two-pass argmax: the maximum (exact in any order), then its first index."""
    n = w.shape[0]
    countf = np.empty(n, np.float64)
    deficit = np.empty(n, np.float64)
    for i in range(n):
        countf[i] = float(counts[i])
    for j in range(start, stop):
        t = float(j + 1) if fixed else max(float(j), 1.0)
        m = _max_deficit_nb(w, countf, t, deficit)
        k = 0
        while deficit[k] != m:
            k += 1
        if write:
            out_index[j - start] = k
            out_sample[j - start] = counts[k]
        counts[k] += 1
        countf[k] += 1.0


if HAVE_NUMBA:
    # Only the reduction gets relaxed flags: "contract" (FMA) is deliberately absent, so each
    # deficit is rounded exactly like the C++ helper's, and max() of finite values is exact.
    _max_deficit_nb = _numba.njit(fastmath={"nnan", "ninf", "nsz"}, cache=True)(_max_deficit)
    _fill_scalar = _numba.njit(cache=True)(_fill_nb_scalar)
    _fill_two_pass = _numba.njit(cache=True)(_fill_nb_two_pass)


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

    ``out_index``/``out_sample`` receive steps ``start..stop-1`` (length ``stop - start``); pass
    ``None`` for both to only advance ``counts`` (used to get exact per-dataset demand cheaply).
    """
    write = out_index is not None
    if not write:
        out_index = np.empty(0, np.int16)
        out_sample = np.empty(0, np.int64)
    if not HAVE_NUMBA:
        _fill_py(w, counts, start, stop, fixed, out_index, out_sample, write)
    elif w.shape[0] <= _TWO_PASS_MAX_DATASETS:
        _fill_two_pass(w, counts, start, stop, fixed, out_index, out_sample, write)
    else:
        _fill_scalar(w, counts, start, stop, fixed, out_index, out_sample, write)
