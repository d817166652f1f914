"""Benchmark: blending indices, ours (fixed and megatron mode) vs megatron-core's compiled helper.

Usage: python bench/bench_blend.py [--size 100000000] [--datasets 3 300] [--repeat 1]
Prints seconds, the ratio ours / megatron-core (lower is better) and peak traced memory per run.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from collections.abc import Callable

import numpy as np

from pipeline.blend import _kernel, build_blending_indices


def megatron_core_build(weights: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """megatron-core 0.16.1's BlendedDataset path: normalize, int16/int64 arrays, C++ helper."""
    from megatron.core.datasets import helpers_cpp, utils

    w = np.asarray(utils.normalize(list(weights)), dtype=np.float64)
    index = np.zeros(size, dtype=np.int16)
    sample = np.zeros(size, dtype=np.int64)
    helpers_cpp.build_blending_indices(index, sample, w, len(w), size, False)
    return index, sample


def measure(fn: Callable[[], tuple[np.ndarray, np.ndarray]], repeat: int) -> tuple[float, int, tuple]:
    """Best wall time over ``repeat`` runs and the peak memory traced during the last one."""
    best = float("inf")
    for _ in range(repeat):
        tracemalloc.start()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return best, peak, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10**8, help="S, samples in the blend")
    parser.add_argument("--datasets", type=int, nargs="+", default=[3, 300])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # megatron-core warns about missing Apex / Transformer Engine
    print(f"S={args.size:,}  numba={'yes' if _kernel.HAVE_NUMBA else 'no (Python fallback)'}")
    rng = np.random.default_rng(args.seed)
    for n in args.datasets:
        weights = rng.dirichlet(np.ones(n)) + 1e-4
        for mode in ("fixed", "megatron"):  # compile (or load the numba cache) outside the timing
            build_blending_indices(weights, 1000, mode=mode)
        megatron_core_build(weights, 10)
        t_mc, m_mc, ref = measure(lambda w=weights: megatron_core_build(w, args.size), args.repeat)
        rows = [("megatron-core helpers_cpp", t_mc, m_mc)]
        for mode in ("fixed", "megatron"):
            t, m, out = measure(lambda w=weights, mode=mode: build_blending_indices(w, args.size, mode=mode),
                                args.repeat)
            if mode == "megatron":
                assert np.array_equal(out[0], ref[0]) and np.array_equal(out[1], ref[1]), "not bit-equal"
            rows.append((f"ours mode={mode}", t, m))
            del out
        del ref
        print(f"\n{n} datasets")
        for name, t, m in rows:
            print(f"  {name:28s} {t:9.3f} s  ratio {t / t_mc:5.2f}  peak {m / 2**20:9.1f} MiB")


if __name__ == "__main__":
    main()
