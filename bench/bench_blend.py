"""Benchmark: blending indices, ours (fixed and megatron mode) vs megatron-core's compiled C++ helper.

Usage: python -m bench blend [--size 100000000] [--datasets 3 300] [--repeat 3]
Each round runs the helper and both of our modes back to back, in a rotating order (so machine load
hits all alike);
prints best and median seconds, the ratio of best times ours / helper (lower is better) and peak
traced memory, and checks that mode=megatron equals the helper's arrays bit for bit. Then the
first-call cost in a fresh process: numba compilation with an empty cache, and loading the cache.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable

import numpy as np

from bench.harness import REPO, arguments, write_result
from pipeline.blend import _kernel, build_blending_indices
from tests.megatron_builder import megatron_blend


def timed(fn: Callable[[], tuple[np.ndarray, np.ndarray]]) -> tuple[float, int, tuple]:
    """Wall time of one call, the peak memory traced during it, and its result."""
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak, out


def digest(arrays: tuple[np.ndarray, np.ndarray]) -> str:
    """BLAKE2b of both arrays' bytes (to compare outputs without keeping two blends in memory)."""
    h = hashlib.blake2b(digest_size=16)
    for array in arrays:
        h.update(memoryview(np.ascontiguousarray(array)).cast("B"))
    return h.hexdigest()


def compare(weights: np.ndarray, size: int, repeat: int) -> list[tuple[str, list[float], int]]:
    """Rounds of helper / ours fixed / ours megatron, in a rotating order; per variant (name, times, peak).

    Each output is hashed, then freed before the next call, so every call starts from the same memory
    state (fresh output pages cost as much as the loop at this size, and vary with what is held).
    """
    variants = {
        "megatron-core helpers_cpp": lambda: megatron_blend(weights, size),
        "ours mode=fixed": lambda: build_blending_indices(weights, size, mode="fixed"),
        "ours mode=megatron": lambda: build_blending_indices(weights, size, mode="megatron"),
    }
    names = list(variants)
    times: dict[str, list[float]] = {name: [] for name in names}
    peaks: dict[str, int] = dict.fromkeys(names, 0)
    digests: dict[str, str] = {}
    for round_no in range(repeat):
        for name in names[round_no % 3 :] + names[: round_no % 3]:
            seconds, peak, out = timed(variants[name])
            times[name].append(seconds)
            peaks[name] = max(peaks[name], peak)
            digests[name] = digest(out)
            del out
    assert digests[names[2]] == digests[names[0]], "mode=megatron is not bit-equal to megatron-core's helper"
    return [(name, times[name], peaks[name]) for name in names]


FIRST_CALL = """
import sys, time
t0 = time.perf_counter()
import numpy as np
from pipeline.blend import _kernel, build_blending_indices
_kernel.set_numba(True)  # the compiled twin from the first call, whatever the size
for n in (3, 30, 300):
    for mode in ("fixed", "megatron"):
        build_blending_indices(np.arange(1.0, n + 1), 1000, mode=mode)
print(time.perf_counter() - t0)
"""


def first_call_seconds(cache_dir: str) -> float:
    """Seconds for a fresh process to import and run every kernel once, with ``cache_dir`` as numba's cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, check=True, env=env)
    return float(run.stdout.strip())


def main() -> None:
    parser = arguments(__doc__, size=10**8, repeat=3, seed=0)
    parser.add_argument("--datasets", type=int, nargs="+", default=[3, 300], help="dataset counts (default 3 300)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # megatron-core warns about missing Apex / Transformer Engine
    if _kernel.numba_enabled():
        _kernel.set_numba(True)  # past 64 datasets the compiled twin from the warm-up on (below: outside the timing)
    backend = "numba" if _kernel.numba_enabled() else "numpy lanes only (PIPELINE_BLEND_NUMBA=0)"
    print(f"S={args.size:,}  backend={backend}  rounds={args.repeat}")
    rng = np.random.default_rng(args.seed)
    figures: dict[str, tuple[float, str]] = {}
    for n in args.datasets:
        weights = rng.dirichlet(np.ones(n)) + 1e-4
        for mode in ("fixed", "megatron"):  # compile (or load the numba cache) outside the timing
            build_blending_indices(weights, 1000, mode=mode)
        megatron_blend(weights, 10)
        rows = compare(weights, args.size, args.repeat)
        base = min(rows[0][1])
        print(f"\n{n} datasets{'':18s}   best s  median s  ratio(best)  peak MiB")
        for name, times, peak in rows:
            figures[f"{n} datasets {name}"] = (min(times) / base, "x")
            print(
                f"  {name:28s} {min(times):7.3f}  {statistics.median(times):8.3f}  "
                f"{min(times) / base:11.2f}  {peak / 2**20:8.1f}"
            )
    if _kernel.numba_enabled():
        with tempfile.TemporaryDirectory() as cache:
            cold = first_call_seconds(cache)
            warm = first_call_seconds(cache)
        print(
            f"\nfirst call in a fresh process (import + every kernel, n=3/30/300, both modes): "
            f"{cold:.2f} s compiling into an empty numba cache, {warm:.2f} s loading the cache"
        )
        figures |= {"first call compile": (cold, "s"), "first call load": (warm, "s")}
    write_result("blend", args, figures)


if __name__ == "__main__":
    main()
