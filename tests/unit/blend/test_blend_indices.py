"""Unit tests of pipeline.blend.build_blending_indices against a plain reference of the rule
(docs/blending.md, The rule)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.blend import (
    OversampleError,
    _kernel,
    achieved_ratios,
    build_blending_indices,
    dataset_counts,
    index_dtype,
)
from pipeline.numba_backend import BLEND
from tests.backends import numba_backend


def reference(weights, size, megatron=False):
    """docs/blending.md, The rule written out literally: Python floats (IEEE doubles), scan with strict '>'."""
    total = float(np.sum(np.asarray(weights, dtype=np.float64)))
    w = [float(x) / total for x in np.asarray(weights, dtype=np.float64)]
    counts = [0] * len(w)
    index, sample = [], []
    for j in range(size):
        t = max(float(j), 1.0) if megatron else float(j + 1)
        best, k = w[0] * t - counts[0], 0
        for i in range(1, len(w)):
            e = w[i] * t - counts[i]
            if e > best:
                best, k = e, i
        index.append(k)
        sample.append(counts[k])
        counts[k] += 1
    return np.array(index, dtype=np.int64), np.array(sample, dtype=np.int64)


def random_weights(rng, n):
    kind = rng.integers(4)
    if kind == 0:
        return rng.random(n) + 1e-3
    if kind == 1:
        return rng.exponential(size=n) ** 3 + 1e-6  # very skewed
    if kind == 2:
        return rng.integers(1, 10, size=n).astype(float)  # small integers: many exact ties
    return np.round(rng.dirichlet(np.ones(n)), 2) + 0.01  # "0.3 / 0.7"-style decimals


@pytest.mark.parametrize("megatron", [False, True])
def test_matches_reference_rule_on_random_cases(megatron):
    rng = np.random.default_rng(1234 + megatron)
    mode = "megatron" if megatron else "fixed"
    for _ in range(300):
        n = int(rng.integers(2, 40))
        size = int(rng.integers(0, 30_000 // n))
        w = random_weights(rng, n)
        ref_index, ref_sample = reference(w, size, megatron)
        index, sample = build_blending_indices(w, size, mode=mode)
        np.testing.assert_array_equal(index.astype(np.int64), ref_index, err_msg=f"w={w.tolist()} S={size}")
        np.testing.assert_array_equal(sample, ref_sample)
        assert sample.dtype == np.int64


def test_fixed_mode_differs_from_megatron_quirk():
    """Megatron decides steps 0 and 1 both at t=1; the fixed mode uses t=j+1 throughout."""
    fixed, _ = build_blending_indices([0.3, 0.7], 10)
    mega, _ = build_blending_indices([0.3, 0.7], 10, mode="megatron")
    assert fixed.tolist() == [1, 0, 1, 1, 0, 1, 1, 1, 0, 1]
    assert mega.tolist() == [1, 0, 1, 1, 0, 1, 1, 0, 1, 1]


def _on_both_backends(seed: int = 7) -> tuple[list, list]:
    """The same blends built with the compiled twin and with the numpy lanes alone, each forced and checked."""
    rng = np.random.default_rng(seed)
    cases = [(random_weights(rng, int(rng.integers(2, 300))), int(rng.integers(1, 3000))) for _ in range(20)]
    runs = {}
    for numba in (True, False):
        with numba_backend(BLEND, numba):
            runs[numba] = [build_blending_indices(w, s, mode=m) for w, s in cases for m in ("fixed", "megatron")]
    return runs[True], runs[False]


def test_lanes_equal_the_compiled_twin():
    compiled, fallback = _on_both_backends()
    for (a, b), (c, d) in zip(compiled, fallback, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_backend_comparison_sees_a_fallback_that_differs(monkeypatch):
    """The comparison above really runs two backends: a fallback off by one step is noticed."""
    fill_lanes = _kernel.fill_lanes

    def off_by_one(w, counts, start, stop, fixed, out_index, out_sample, write):  # noqa: ANN001
        fill_lanes(w, counts, start, stop, fixed, out_index, out_sample, write)
        if write and stop > start:
            out_index[0] = (out_index[0] + 1) % len(w)

    monkeypatch.setattr(_kernel, "fill_lanes", off_by_one)
    compiled, fallback = _on_both_backends()
    assert any(not np.array_equal(a, c) for (a, _), (c, _) in zip(compiled, fallback, strict=True))


@pytest.mark.parametrize("mode", ["fixed", "megatron"])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 300])
def test_equal_weights_are_round_robin(mode, n):
    size = 10 * n + 3
    index, sample = build_blending_indices([2.5] * n, size, mode=mode)
    j = np.arange(size)
    np.testing.assert_array_equal(index, j % n)
    np.testing.assert_array_equal(sample, j // n)
    ref_index, ref_sample = reference([2.5] * n, size, megatron=mode == "megatron")
    np.testing.assert_array_equal(index, ref_index)
    np.testing.assert_array_equal(sample, ref_sample)


def test_equal_weights_use_no_loop(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("equal weights must not run the sequential kernel")

    monkeypatch.setattr(_kernel, "fill", boom)
    index, _ = build_blending_indices([1, 1, 1, 1], 10**6)
    assert index[-1] == (10**6 - 1) % 4


@pytest.mark.parametrize(
    ("n", "dtype"), [(2, np.uint8), (255, np.uint8), (256, np.int16), (32767, np.int16), (32768, np.int32)]
)
def test_dataset_index_dtype_grows_with_dataset_count(n, dtype):
    assert index_dtype(n) == dtype
    w = 1.0 + 1e-3 * np.arange(n) / n  # unequal (no round-robin shortcut) but close to equal
    index, _ = build_blending_indices(w, n)
    assert index.dtype == dtype
    assert int(index.max()) == n - 1  # indices above 255 survive (no uint8 wrap-around)
    assert set(np.unique(index).tolist()) == set(range(n))


def test_megatron_mode_dtype_and_limit():
    index, _ = build_blending_indices([1.0, 2.0], 10, mode="megatron")
    assert index.dtype == np.int16
    with pytest.raises(ValueError, match="at most"):
        build_blending_indices(np.ones(32767), 1, mode="megatron")
    with pytest.raises(ValueError, match="> 0"):
        build_blending_indices([1.0, 0.0], 1, mode="megatron")


def test_achieved_ratios_are_within_proven_bounds():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(2, 300))
        size = int(rng.integers(1, 100_000))
        w = random_weights(rng, n)
        w = w / w.sum()
        index, sample = build_blending_indices(w, size)
        counts = dataset_counts(index, n)
        assert counts.sum() == size
        # a pick needs the maximum deficit, which is >= the mean 1/n > 0: C_i <= w_i*S + 1
        assert np.all(counts <= w * size + 1 + 1e-6)
        assert np.all(counts >= w * size - (n - 1) - 1e-6)
        np.testing.assert_allclose(achieved_ratios(index, n), counts / size)
        # sample indices of each dataset are 0, 1, 2, ... in order
        order = np.argsort(index, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        np.testing.assert_array_equal(sample[order], np.arange(size) - np.repeat(starts, counts))
    index, _ = build_blending_indices([0.3, 0.7], 10**6)
    assert np.abs(achieved_ratios(index, 2) - [0.3, 0.7]).max() <= 1e-6


def test_zero_weight_dataset_is_never_picked():
    index, _ = build_blending_indices([0.0, 1.0, 2.0, 0.0], 5000)
    assert set(np.unique(index).tolist()) == {1, 2}


def test_oversample_error_names_dataset_size_and_demand(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("a clear over-demand must fail before any index is built")

    monkeypatch.setattr(_kernel, "fill", boom)
    with pytest.raises(OversampleError) as err:
        build_blending_indices([0.25, 0.75], 1000, sizes=[1000, 500], names=["web", "code"])
    msg = str(err.value)
    assert "'code'" in msg and "500" in msg and "750" in msg and "wrap" in msg
    assert "'web'" not in msg


def test_oversample_close_call_is_exact():
    w, size = [0.3, 0.7], 1001
    index, _ = build_blending_indices(w, size)
    counts = dataset_counts(index, 2)
    build_blending_indices(w, size, sizes=counts)  # exactly enough: fine
    for k in range(2):
        short = counts.copy()
        short[k] -= 1
        expected = f"dataset {k} has {short[k]} samples.*asks it for (at least )?{counts[k]}\\b"
        with pytest.raises(OversampleError, match=expected):
            build_blending_indices(w, size, sizes=short)


def test_never_oversamples_when_sizes_suffice():
    rng = np.random.default_rng(11)
    for _ in range(100):
        n = int(rng.integers(2, 50))
        size = int(rng.integers(1, 50_000))
        w = random_weights(rng, n)
        sizes = np.floor(w / w.sum() * size + 1).astype(np.int64)
        index, sample = build_blending_indices(w, size, sizes=sizes)
        assert np.all(sample < sizes[index])


def test_wrap_reuses_samples_modulo_size():
    w, size, sizes = [0.5, 0.3, 0.2], 10_000, np.array([7, 4000, 13])
    plain_index, plain_sample = build_blending_indices(w, size)
    index, sample = build_blending_indices(w, size, sizes=sizes, oversample="wrap", chunk=999)
    np.testing.assert_array_equal(index, plain_index)
    np.testing.assert_array_equal(sample, plain_sample % sizes[index])
    assert np.all(sample < sizes[index])
    with pytest.raises(OversampleError, match="empty dataset"):
        build_blending_indices(w, size, sizes=[0, 10, 10], oversample="wrap")
    build_blending_indices([1.0, 0.0], 10, sizes=[1, 0], oversample="wrap")  # empty but unused


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": [], "size": 3}, "non-empty"),
        ({"weights": [1.0, -1.0], "size": 3}, ">= 0"),
        ({"weights": [0.0, 0.0], "size": 3}, "all be zero"),
        ({"weights": [1.0, float("nan")], "size": 3}, "finite"),
        ({"weights": [1.0, 2.0], "size": -1}, "size"),
        ({"weights": [1.0, 2.0], "size": 2.5}, "size"),
        ({"weights": [1.0, 2.0], "size": 3, "mode": "nemo"}, "mode"),
        ({"weights": [1.0, 2.0], "size": 3, "oversample": "clip"}, "oversample"),
        ({"weights": [1.0, 2.0], "size": 3, "sizes": [5]}, "sizes"),
        ({"weights": [1.0, 2.0], "size": 3, "sizes": [5, -1]}, "sizes"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        build_blending_indices(**kwargs)


def test_empty_blend():
    index, sample = build_blending_indices([0.2, 0.8], 0)
    assert index.shape == sample.shape == (0,)
    assert achieved_ratios(index, 2).tolist() == [0.0, 0.0]
