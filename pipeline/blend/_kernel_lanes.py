"""The blending loop of :mod:`pipeline.blend._kernel` in numpy, vectorised across steps: speculative lanes.

The loop's state before a step is its count vector alone: every deficit is computed afresh as
``w[i] * t - float(C[i])``, so two runs holding the same counts at a step make the same choices from there.
The steps are cut into chunks of ``B``; lane ``k`` runs the loop over chunk ``k`` for all lanes at once (one
numpy operation per step over ``lanes x datasets``), starting ``W`` steps early from a guessed state (counts
near ``w * t`` adding up to the step). The rule pulls every count back towards ``w_i * t``, so a guess meets
the true counts within a few dozen steps. A chunk is exact when its lane's counts at the chunk's first
step equal those the previous (exact) chunk ends with; a chunk that fails the check is run again from
those counts, and passes repeat until every chunk is verified. The output never depends on the guesses,
only the time does (worst case: one pass per chunk, the sequential loop). The lanes' products ``w * t`` take
``BLOCK x datasets x lanes`` doubles: with many datasets, fewer and longer chunks keep them under ``LANE_BYTES``
(with one lane, the steps simply run in order).
"""

from __future__ import annotations

import math

import numpy as np

WARM_UP = 48  # steps a lane runs from its guess before the chunk it answers for
SEGMENT = 1 << 22  # steps per round of lanes (bounds the lanes' memory)
BLOCK = 32  # steps whose products w * t are formed in one operation
LANE_BYTES = 1 << 26  # bound on the lanes' products w * t (64 datasets never reach it)


def chunk_length(steps: int) -> int:
    """Steps per chunk: about sqrt(steps) balances numpy's per-call cost against the warm-up steps."""
    return max(WARM_UP, math.isqrt(max(steps, 1)))


def _guess(w: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Float counts near ``w * total`` adding up to ``total`` (largest remainders): datasets x entries."""
    ideal = w[:, None] * total[None, :].astype(np.float64)
    base = np.floor(ideal)
    short = total - base.sum(axis=0).astype(np.int64)
    rank = np.argsort(np.argsort(base - ideal, axis=0, kind="stable"), axis=0, kind="stable")
    guess: np.ndarray = base + (rank < short[None, :])
    return guess


def _run(w: np.ndarray, count: np.ndarray, first: np.ndarray, steps: int, fixed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Advance every lane (the columns of ``count``, float, updated in place) ``steps`` steps from its step
    ``first``; the picks (int16, int32 past 32767 datasets) and the picked dataset's count before each pick
    (int64), ``lanes x steps``."""
    n, lanes = count.shape
    picks = np.empty((lanes, steps), np.int16 if n <= np.iinfo(np.int16).max else np.int32)
    samples = np.empty((lanes, steps), np.int64)
    cells = np.arange(lanes, dtype=np.intp)
    if not count.flags.c_contiguous:
        raise ValueError("lane counts must be C-contiguous")  # the updates go through a flat view
    flat = count.reshape(-1)
    base = first.astype(np.float64) + (1.0 if fixed else 0.0)
    for lo in range(0, steps, BLOCK):
        hi = min(steps, lo + BLOCK)
        t = base[None, :] + np.arange(lo, hi, dtype=np.float64)[:, None]  # integers: exact
        if not fixed:
            np.maximum(t, 1.0, out=t)  # Megatron's t = max(j, 1)
        deficits = w[None, :, None] * t[:, None, :]  # w[i] * t rounded once, as the loop does
        for s in range(hi - lo):
            deficit = deficits[s]
            np.subtract(deficit, count, out=deficit)
            k = deficit.argmax(axis=0)  # the first maximum, as the strict ">" scan keeps
            picks[:, lo + s] = k
            k *= lanes
            k += cells
            taken = flat[k]
            samples[:, lo + s] = taken  # the dataset's count before this step: the sample it gives
            taken += 1.0
            flat[k] = taken
    return picks, samples


def _segment(w: np.ndarray, counts: np.ndarray, start: int, stop: int, fixed: bool) -> tuple[np.ndarray, np.ndarray]:
    """The picks and samples (int64) of steps ``start..stop-1`` from the exact ``counts`` at ``start``."""
    steps = stop - start
    size = chunk_length(steps)
    size = max(size, -(-steps // max(1, LANE_BYTES // (BLOCK * w.size * 8))))  # few enough lanes
    lanes = -(-(steps - WARM_UP) // size)
    if lanes <= 1:  # too short to share out: one lane from the exact counts
        picks, samples = _run(w, counts.astype(np.float64)[:, None], np.array([start]), steps, fixed)
        return picks[0], samples[0]
    firsts = start + np.arange(lanes, dtype=np.int64) * size  # lane k runs from here, answers from here + W
    count = _guess(w, firsts - start + int(counts.sum()))
    count[:, 0] = counts  # lane 0 starts at the exact state and answers for its warm-up steps too
    head, head_samples = _run(w, count, firsts, WARM_UP, fixed)
    entry = count.copy()  # each lane's counts at the first step it answers for
    picks, samples = _run(w, count, firsts + WARM_UP, size, fixed)
    while True:
        bad = np.flatnonzero(np.any(entry[:, 1:] != count[:, :-1], axis=0)) + 1  # entered other than k - 1 ended
        if bad.size == 0:
            break  # lane 0 is exact and each lane entered with its predecessor's exact counts
        # the first bad lane's predecessor is exact, so at least that lane is exact after this pass
        again = np.ascontiguousarray(count[:, bad - 1])  # _run updates it through a flat view
        entry[:, bad] = again
        picks[bad], samples[bad] = _run(w, again, firsts[bad] + WARM_UP, size, fixed)
        count[:, bad] = again
    # lane 0's warm-up steps, then each lane's chunk in order
    return (
        np.concatenate((head[0], picks.reshape(-1)))[:steps],
        np.concatenate((head_samples[0], samples.reshape(-1)))[:steps],
    )


def fill_lanes(
    w: np.ndarray,
    counts: np.ndarray,
    start: int,
    stop: int,
    fixed: bool,
    out_index: np.ndarray,
    out_sample: np.ndarray,
    write: bool,
) -> None:
    """The contract of :func:`pipeline.blend._kernel.fill` (``write`` False: only ``counts`` advance)."""
    for lo in range(start, stop, SEGMENT):
        hi = min(stop, lo + SEGMENT)
        picks, samples = _segment(w, counts, lo, hi, fixed)
        if write:
            out_index[lo - start : hi - start] = picks
            out_sample[lo - start : hi - start] = samples
        counts += np.bincount(picks, minlength=w.size)[: w.size]
