"""The blend loop (numpy lanes) and its one compiled twin (blocks of candidates) == the plain rule ==
megatron-core's C++ helper.

Each is called directly on every input, whatever the dataset count it is normally chosen for, so a bug in one
cannot hide behind the dispatch. The plain rule is written out here in Python floats; megatron-core is the
oracle of Megatron mode.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline.blend import _kernel, _kernel_lanes, build_blending_indices
from pipeline.numba_backend import BLEND
from tests.backends import numba_backend
from tests.megatron_builder import megatron_blend
from tests.oracles import require_oracle

require_oracle("numba")
from pipeline.blend import _kernel_numba as nb  # noqa: E402

KERNELS = {
    "lanes": _kernel_lanes.fill_lanes,
    "blocks": lambda w, c, a, b, f, i, s, wr: nb.fill_blocks(w, c, a, b, f, i, s, wr, _kernel.block_length(len(w))),
    "blocks-short": lambda w, c, a, b, f, i, s, wr: nb.fill_blocks(w, c, a, b, f, i, s, wr, 2),
}


def weights_of_kind(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    """Normalised weights: uniform, very skewed, small integers (exact ties), decimals, with zeros."""
    if kind == 0:
        w = rng.random(n) + 1e-3
    elif kind == 1:
        w = rng.exponential(size=n) ** 4 + 1e-9
    elif kind == 2:
        w = rng.integers(1, 5, size=n).astype(np.float64)
    elif kind == 3:
        w = np.round(rng.dirichlet(np.ones(n)), 3) + 0.001
    else:  # some zero weights (fixed mode only: Megatron asserts every weight > 0)
        w = rng.random(n) * (rng.random(n) < 0.6)
        w[rng.integers(n)] = 1.0
    return w / w.sum()


def plain_fill(w, size, fixed, start_counts=None):  # noqa: ANN001
    """The rule of docs/blending.md one step at a time in Python floats (IEEE doubles: ``w[i] * t`` rounded, then
    the count subtracted, ties to the smaller index); returns (index, sample, counts) as int64 arrays."""
    counts = [0] * len(w) if start_counts is None else [int(c) for c in start_counts]
    weights = [float(x) for x in w]
    index, sample = [], []
    for j in range(size):
        t = float(j + 1) if fixed else max(float(j), 1.0)
        k = max(range(len(weights)), key=lambda i: (weights[i] * t - counts[i], -i))
        index.append(k)
        sample.append(counts[k])
        counts[k] += 1
    return np.array(index, np.int64), np.array(sample, np.int64), np.array(counts, np.int64)


def run_kernel(name, w, size, fixed, dtype=np.int32):  # noqa: ANN001
    counts = np.zeros(len(w), np.int64)
    index, sample = np.empty(size, dtype), np.empty(size, np.int64)
    KERNELS[name](w, counts, 0, size, fixed, index, sample, True)
    return index, sample, counts


@pytest.mark.parametrize("fixed", [True, False])
@pytest.mark.parametrize("name", list(KERNELS))
def test_every_kernel_equals_the_plain_rule(name, fixed):
    rng = np.random.default_rng(99 + 7 * fixed + len(name))
    sizes = [1, 2, 3, 5, 9, 40, 65, 300]
    for case in range(120):
        n = int(rng.choice(sizes))
        kind = int(rng.integers(5 if fixed else 4))
        w = weights_of_kind(rng, n, kind)
        size = int(rng.integers(0, 20_000 // n + 2))
        expected = plain_fill(w, size, fixed)
        got = run_kernel(name, w, size, fixed)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"case {case}: {name} n={n} kind={kind} S={size}")


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernels_resume_from_counts_and_count_without_writing(name):
    """Two calls (start..mid, mid..stop) equal one; write=False only advances the counts."""
    rng = np.random.default_rng(5)
    n = 90
    w = weights_of_kind(rng, n, 0)
    for fixed in (True, False):
        index, sample, counts = run_kernel(name, w, 5000, fixed)
        c = np.zeros(n, np.int64)
        first_i, first_s = np.empty(1234, np.int64), np.empty(1234, np.int64)
        second_i, second_s = np.empty(5000 - 1234, np.int64), np.empty(5000 - 1234, np.int64)
        KERNELS[name](w, c, 0, 1234, fixed, first_i, first_s, True)
        KERNELS[name](w, c, 1234, 5000, fixed, second_i, second_s, True)
        np.testing.assert_array_equal(np.concatenate([first_i, second_i]), index)
        np.testing.assert_array_equal(np.concatenate([first_s, second_s]), sample)
        np.testing.assert_array_equal(c, counts)
        only = np.zeros(n, np.int64)
        KERNELS[name](w, only, 0, 5000, fixed, np.empty(0, np.int16), np.empty(0, np.int64), False)
        np.testing.assert_array_equal(only, np.bincount(index, minlength=n))


def test_lanes_numba_and_megatron_core_agree_on_random_weights():
    """Megatron mode through the public API, both backends, against the C++ helper (the oracle)."""
    rng = np.random.default_rng(424242)
    for case in range(150):
        n = int(rng.choice([2, 3, 4, 5, 17, 64, 65, 128, 300, 700]))
        w = weights_of_kind(rng, n, int(rng.integers(4)))
        size = int(min(10 ** rng.uniform(0, 5), 200_000 // n + 1))
        ref_index, ref_sample = megatron_blend(w, size)
        with numba_backend(BLEND, True):
            compiled = build_blending_indices(w, size, mode="megatron")
        with numba_backend(BLEND, False):
            fallback = build_blending_indices(w, size, mode="megatron")
        for got in (compiled, fallback):
            assert np.array_equal(got[0], ref_index) and np.array_equal(got[1], ref_sample), f"case {case}: n={n}"


@pytest.mark.parametrize("n", [3, 300])
def test_large_blend_equals_megatron_core(n):
    """Millions of steps (t up to 2e6), where rounding of the deficits is coarsest."""
    size = 4_000_000 if n == 3 else 1_000_000
    rng = np.random.default_rng(n)
    for kind in (1, 2, 3):
        w = weights_of_kind(rng, n, kind)
        ref_index, ref_sample = megatron_blend(w, size)
        index, sample = build_blending_indices(w, size, mode="megatron")
        assert np.array_equal(index, ref_index) and np.array_equal(sample, ref_sample), f"kind {kind}"


def test_switch_off_skips_numba_and_gives_the_same_blend():
    """PIPELINE_BLEND_NUMBA=0 keeps the lanes and never imports numba; the arrays are equal. The last blend,
    150 datasets x ``long`` steps, is past LANES_AFTER, so the switch on loads the compiled twin."""
    long = _kernel.LANES_AFTER // (150 + _kernel.LANE_STEP) + 1000
    code = (
        "import sys, hashlib, numpy as np\n"
        "from pipeline.blend import build_blending_indices\n"
        "before = 'numba' in sys.modules\n"
        "h = hashlib.sha256()\n"
        f"for n, size in ((3, 3000), (20, 3000), (150, 3000), (150, {long})):\n"
        "    w = np.random.default_rng(n).random(n) + 0.01\n"
        "    for mode in ('fixed', 'megatron'):\n"
        "        for a in build_blending_indices(w, size, mode=mode):\n"
        "            h.update(a.tobytes())\n"
        "print(before, 'numba' in sys.modules, h.hexdigest())\n"
    )
    outs = {}
    for flag in ("0", "1"):
        env = {**os.environ, "PIPELINE_BLEND_NUMBA": flag}
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        outs[flag] = run.stdout.split()
    assert outs["0"][:2] == ["False", "False"]
    assert outs["1"][:2] == ["False", "True"]
    assert outs["0"][2] == outs["1"][2]


def test_a_long_blend_of_few_datasets_runs_the_compiled_twin(monkeypatch):
    """Work is counted as steps x (datasets + LANE_STEP): a blend of 3 datasets past LANES_AFTER runs
    fill_blocks (lowered here to 20,000 steps' worth), one shorter than that stays on the lanes, and both equal
    megatron-core's helper."""
    calls = []
    monkeypatch.setattr(_kernel, "LANES_AFTER", 20_000 * (3 + _kernel.LANE_STEP))
    monkeypatch.setattr(BLEND, "_seen", {})
    monkeypatch.setattr(BLEND, "_warm", set())
    original = nb.fill_blocks
    monkeypatch.setattr(nb, "fill_blocks", lambda *args: calls.append(args[3] - args[2]) or original(*args))
    w = weights_of_kind(np.random.default_rng(5), 3, 2)
    for size, compiled in ((15_000, False), (30_000, True)):
        index, sample = build_blending_indices(w, size, mode="megatron")
        ref_index, ref_sample = megatron_blend(w, size)
        assert np.array_equal(index, ref_index) and np.array_equal(sample, ref_sample), size
        assert bool(calls) == compiled, (size, calls)


@pytest.mark.parametrize(
    "weights",
    [
        [1.0],
        [1.0, 2.0],
        [2.0, 1.0, 1.0],
        [1e-6, 1.0, 0.3],
        [1.0, 1.0, 1.0, 2.0],
        [3.0, 1.0, 1.0, 3.0, 3.0],
        [1.0, 2.0, 2.0, 1.0, 2.0, 2.0, 1.0, 2.0, 2.0],
        [0.5, 0.25, 0.125, 0.0625, 0.0625],
    ],
)
def test_few_datasets_in_long_runs_equal_megatron_core(weights):
    """At most a few datasets, every one a candidate: fill_blocks runs several blocks of ``RUN_WORK`` steps x
    datasets, the first four candidates in locals (unused places padded), the rest from the arrays; ties fall
    inside the head and across its border with the rest. Megatron mode against the C++ helper, fixed mode
    against the plain rule (shorter), resuming from the counts half-way."""
    w = np.asarray(weights) / sum(weights)
    n = len(w)
    size = 3 * (nb.RUN_WORK // n) + 17
    ref_index, ref_sample = megatron_blend(w, size, normalized=True)
    index, sample, counts = run_kernel("blocks", w, size, False, np.int16)
    assert np.array_equal(index, ref_index) and np.array_equal(sample, ref_sample)
    np.testing.assert_array_equal(counts, np.bincount(ref_index, minlength=n))
    size = min(size, 40_000)
    expected = plain_fill(w, size, True)
    counts = np.zeros(n, np.int64)
    index, sample = np.empty(size, np.uint8), np.empty(size, np.int64)
    mid = size // 3
    nb.fill_blocks(w, counts, 0, mid, True, index[:mid], sample[:mid], True, _kernel.block_length(n))
    nb.fill_blocks(w, counts, mid, size, True, index[mid:], sample[mid:], True, _kernel.block_length(n))
    for got, want in zip((index, sample, counts), expected, strict=True):
        np.testing.assert_array_equal(got, want)
