"""The numpy lanes of the blending loop (pipeline.blend._kernel_lanes) against megatron-core's C++ helper.

The lanes start from guessed counts and are verified by chaining; the output must not depend on the guesses,
so one test replaces the guess with a bad one and expects the same arrays (the repair passes at work).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from pipeline.blend import _kernel_lanes as lanes
from tests.megatron_builder import megatron_blend

REPO = Path(__file__).resolve().parents[3]


def _weights(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    """Random, skewed, or small integers (exact ties between deficits), normalised."""
    if kind == 0:
        w = rng.random(n) + 1e-3
    elif kind == 1:
        w = rng.exponential(size=n) ** 4 + 1e-6
    else:
        w = rng.integers(1, 6, size=n).astype(np.float64)
    return w / w.sum()


def _helper(w: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    return megatron_blend(w, size, normalized=True)


def _lanes(w: np.ndarray, size: int, fixed: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = np.zeros(len(w), np.int64)
    index, sample = np.empty(size, np.int16), np.empty(size, np.int64)
    lanes.fill_lanes(w, counts, 0, size, fixed, index, sample, True)
    return index, sample, counts


def test_lanes_equal_the_cpp_helper():
    rng = np.random.default_rng(31)
    for case in range(60):
        n = int(rng.choice([1, 2, 3, 5, 8, 17, 64]))
        w = _weights(rng, n, case % 3)
        size = int(rng.choice([0, 1, 47, 48, 49, 500, 3182, 40_000]))
        index, sample, counts = _lanes(w, size)
        want_index, want_sample = _helper(w, size)
        assert np.array_equal(index, want_index) and np.array_equal(sample, want_sample), (case, n, size)
        assert np.array_equal(counts, np.bincount(want_index, minlength=n)), case


def test_bad_guesses_are_repaired(monkeypatch):
    """Every lane but the first starts from all counts on dataset 0: the chain check must catch each one."""

    def bad_guess(w: np.ndarray, total: np.ndarray) -> np.ndarray:
        guess = np.zeros((len(w), len(total)))
        guess[0] = total
        return guess

    monkeypatch.setattr(lanes, "_guess", bad_guess)
    rng = np.random.default_rng(5)
    for kind in range(3):
        w = _weights(rng, 5, kind)
        index, sample, _ = _lanes(w, 30_000)
        want_index, want_sample = _helper(w, 30_000)
        assert np.array_equal(index, want_index) and np.array_equal(sample, want_sample), kind


def test_segments_resume_from_counts_and_count_without_writing(monkeypatch):
    """Small segments, a start past 0 from the counts so far, and ``write=False``: the helper's arrays."""
    monkeypatch.setattr(lanes, "SEGMENT", 1000)
    w = _weights(np.random.default_rng(9), 4, 0)
    want_index, want_sample = _helper(w, 7000)
    counts = np.bincount(want_index[:2500], minlength=4).astype(np.int64)
    index, sample = np.empty(4500, np.int16), np.empty(4500, np.int64)
    lanes.fill_lanes(w, counts, 2500, 7000, False, index, sample, True)
    assert np.array_equal(index, want_index[2500:]) and np.array_equal(sample, want_sample[2500:])
    only = np.zeros(4, np.int64)
    lanes.fill_lanes(w, only, 0, 7000, False, np.empty(0, np.int16), np.empty(0, np.int64), False)
    assert np.array_equal(only, np.bincount(want_index, minlength=4))


def test_fixed_mode_follows_the_plain_rule():
    """Fixed mode (t = j + 1) against the rule written out step by step here."""
    rng = np.random.default_rng(12)
    for case in range(6):
        w = _weights(rng, int(rng.integers(2, 9)), case % 3)
        size = 2000
        counts = np.zeros(len(w), np.int64)
        want_index, want_sample = np.empty(size, np.int64), np.empty(size, np.int64)
        for j in range(size):
            k = int(np.argmax(w * float(j + 1) - counts.astype(np.float64)))
            want_index[j], want_sample[j] = k, counts[k]
            counts[k] += 1
        index, sample, got_counts = _lanes(w, size, fixed=True)
        assert np.array_equal(index, want_index) and np.array_equal(sample, want_sample), case
        assert np.array_equal(got_counts, counts)


def test_a_blend_of_a_few_hundred_thousand_steps_does_not_import_numba():
    """The default path (numba importable, no threshold from the tests) stays on the lanes."""
    code = (
        "import sys, numpy as np\n"
        "from pipeline.blend import build_blending_indices\n"
        "w = np.arange(1, 6, dtype=np.float64)\n"
        "index, sample = build_blending_indices(w / w.sum(), 320_000, mode='megatron')\n"
        "print('numba' in sys.modules, int(index.sum()), int(sample[-1]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PIPELINE_NUMBA_AFTER", "PIPELINE_BLEND_NUMBA")}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    imported, total, last = out.stdout.split()
    w = np.arange(1, 6, dtype=np.float64)
    want_index, want_sample = _helper(w / w.sum(), 320_000)
    assert imported == "False"
    assert (int(total), int(last)) == (int(want_index.astype(np.int64).sum()), int(want_sample[-1]))


def test_many_datasets_run_fewer_longer_chunks(monkeypatch):
    """Past LANE_BYTES the lanes get longer chunks (here at most 3 lanes of 300 datasets, then 1): the helper's
    arrays all the same."""
    rng = np.random.default_rng(77)
    w = _weights(rng, 300, 0)
    want_index, want_sample = _helper(w, 20_000)
    for lane_bytes in (3 * lanes.BLOCK * 300 * 8, 1):
        monkeypatch.setattr(lanes, "LANE_BYTES", lane_bytes)
        index, sample, _ = _lanes(w, 20_000)
        assert np.array_equal(index, want_index) and np.array_equal(sample, want_sample), lane_bytes


def test_more_datasets_than_int16_holds():
    """40,000 datasets (fixed mode's int32 index): picks past 32767 come back whole, as the step rule gives."""
    w = _weights(np.random.default_rng(3), 40_000, 0)
    size, counts = 3000, np.zeros(40_000, np.int64)
    want = np.empty(size, np.int64)
    for j in range(size):
        want[j] = int(np.argmax(w * float(j + 1) - counts.astype(np.float64)))
        counts[want[j]] += 1
    got = np.empty(size, np.int32)
    lanes.fill_lanes(w, np.zeros(40_000, np.int64), 0, size, True, got, np.empty(size, np.int64), True)
    assert want.max() > 32767 and np.array_equal(got, want)
