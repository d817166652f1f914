"""Conformance: mode="megatron" equals megatron-core 0.16.1's compiled helper bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.blend import build_blending_indices, parse_blend
from tests.megatron_builder import megatron_blend as megatron_indices
from tests.oracles import require_oracle

mcore_utils = require_oracle("megatron.core.datasets.utils")


def random_case(rng):
    n = int(rng.integers(2, 301))
    kind = int(rng.integers(5))
    if kind == 0:
        w = rng.random(n) + 1e-3
    elif kind == 1:
        w = rng.exponential(size=n) ** 4 + 1e-9
    elif kind == 2:
        w = rng.integers(1, 5, size=n).astype(float)  # exact ties everywhere
    elif kind == 3:
        w = np.round(rng.dirichlet(np.ones(n)), 3) + 0.001
    else:
        w = np.ones(n)
        w[rng.integers(n)] = 1.0 + 1e-12  # almost equal: no round-robin shortcut, near-ties
    budget = 4_000_000  # steps * datasets per case keeps the whole file well under a minute
    size = int(min(10**6, budget // n, 10 ** rng.uniform(0, 6)))
    return w, size


def test_megatron_mode_equals_megatron_core_on_1000_random_cases():
    rng = np.random.default_rng(20240601)
    for case in range(1000):
        w, size = random_case(rng)
        ref_index, ref_sample = megatron_indices(w, size)
        index, sample = build_blending_indices(w, size, mode="megatron")
        assert index.dtype == ref_index.dtype == np.int16, case
        assert sample.dtype == ref_sample.dtype == np.int64, case
        assert np.array_equal(index, ref_index), f"case {case}: n={len(w)} S={size}"
        assert np.array_equal(sample, ref_sample), f"case {case}: n={len(w)} S={size}"


@pytest.mark.parametrize("weights", [[0.3, 0.7], [30, 70], [1, 1, 1], [0.5, 0.25, 0.25], [1e-6, 1.0]])
def test_megatron_mode_large_size(weights):
    ref_index, ref_sample = megatron_indices([float(x) for x in weights], 10**6)
    index, sample = build_blending_indices(weights, 10**6, mode="megatron")
    assert np.array_equal(index, ref_index) and np.array_equal(sample, ref_sample)


def test_equal_weights_round_robin_matches_megatron():
    ref_index, ref_sample = megatron_indices([1.0] * 7, 1000)
    index, sample = build_blending_indices([1.0] * 7, 1000, mode="megatron")
    assert np.array_equal(index, ref_index) and np.array_equal(sample, ref_sample)


def test_fixed_mode_is_not_megatron_mode():
    ref_index, _ = megatron_indices([0.3, 0.7], 1000)
    index, _ = build_blending_indices([0.3, 0.7], 1000)
    assert not np.array_equal(index.astype(np.int16), ref_index)


@pytest.mark.parametrize(
    "blend",
    [
        ["30", "prefixA", "70", "prefixB"],
        ["0.25", "a/b/c_text_document", "0.75", "gs://bucket/d_text_document"],
        ["prefixA", "prefixB", "prefixC"],
        ["prefixA", "prefixB"],
        ["1e-3", "x", "2", "y", "3.5", "z"],
    ],
)
def test_parse_blend_matches_megatron_get_blend_from_list(blend):
    prefixes, weights = mcore_utils.get_blend_from_list(blend)
    ours_weights, ours_prefixes = parse_blend(blend)
    assert ours_prefixes == prefixes
    assert ours_weights == weights
    assert parse_blend(" ".join(blend)) == (ours_weights, ours_prefixes)
