"""Benchmark: ours vs megatron-core 0.16.1, the blending indices (its C++ helper) or the training-indices files.

Usage: python -m bench megatron blend [--size 100000000] [--datasets 3 300] [--repeat 3]
       python -m bench megatron training_indices [--tokens 1e9] [--sources 5] [--seq-length 4096] [--epochs 1.3]
           [--repeat 5] [--work DIR]

How it measures: docs/benchmarks.md, Method notes, megatron.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import importlib
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import REPO, arguments, write_result

PARTS: dict[str, dict[str, Any]] = {
    "blend": {"size": 10**8, "repeat": 3, "seed": 0},
    "training_indices": {"tokens": 1e9, "sources": 5, "seq_length": 4096, "epochs": 1.3, "repeat": 5, "work": ""},
}
SIDES = ["megatron-core helpers_cpp", "ours mode=fixed", "ours mode=megatron"]
TOKENIZER = {"class": "HuggingFaceTokenizer", "tokenizer_path": ["/models/bench"]}
FIRST_CALL = """import time; t0 = time.perf_counter(); import numpy as np
from pipeline.blend import _kernel, build_blending_indices
_kernel.set_numba(True)  # the compiled twin from the first call, whatever the size
for n in (3, 30, 300):
    for mode in ("fixed", "megatron"): build_blending_indices(np.arange(1.0, n + 1), 1000, mode=mode)
print(time.perf_counter() - t0)"""


def blend(args: argparse.Namespace) -> None:
    """Rounds of the helper and our two modes in rotating order (mode=megatron checked bit-equal), then numba's
    first-call cost."""
    from pipeline.blend import _kernel, build_blending_indices
    from tests.megatron_builder import megatron_blend

    warnings.filterwarnings("ignore")  # megatron-core warns about missing Apex / Transformer Engine
    if _kernel.numba_enabled():
        _kernel.set_numba(True)  # past 64 datasets the compiled twin from the warm-up on (below: outside the timing)
    backend = "numba" if _kernel.numba_enabled() else "numpy lanes only (PIPELINE_BLEND_NUMBA=0)"
    print(f"S={args.size:,}  backend={backend}  rounds={args.repeat}")
    rng, figures, names = np.random.default_rng(args.seed), {}, SIDES

    def call(w: np.ndarray, size: int, side: str) -> Any:
        return build_blending_indices(w, size, mode=side[10:]) if side[:4] == "ours" else megatron_blend(w, size)

    for n in args.datasets:
        w = rng.dirichlet(np.ones(n)) + 1e-4
        for side in names:  # compile (or load the numba cache) outside the timing
            call(w, 1000, side)
        times, peaks, digests = {s: [] for s in names}, dict.fromkeys(names, 0), {}
        for k in range(args.repeat):  # each output hashed, then freed: every call starts from the same memory
            for side in names[k % 3 :] + names[: k % 3]:
                tracemalloc.start()
                started = time.perf_counter()
                out = call(w, args.size, side)
                times[side].append(time.perf_counter() - started)
                peaks[side] = max(peaks[side], tracemalloc.get_traced_memory()[1])
                tracemalloc.stop()
                digests[side] = hashlib.blake2b(b"".join(np.ascontiguousarray(a).tobytes() for a in out)).digest()
                del out
        assert digests[names[2]] == digests[names[0]], "mode=megatron is not bit-equal to megatron-core's helper"
        base = min(times[names[0]])
        print(f"\n{n} datasets{'':18s}   best s  median s  ratio(best)  peak MiB")
        for name in names:
            best = min(times[name])
            figures[f"{n} datasets {name}"] = (best / base, "x")
            median = statistics.median(times[name])
            print(f"  {name:28s} {best:7.3f}  {median:8.3f}  {best / base:11.2f}  {peaks[name] / 2**20:8.1f}")
    if _kernel.numba_enabled():
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(REPO)}
            cold, warm = (float(subprocess.check_output([sys.executable, "-c", FIRST_CALL], env=env)) for _ in "cw")
        print(
            f"\nfirst call in a fresh process (import + every kernel, n=3/30/300, both modes): "
            f"{cold:.2f} s compiling into an empty numba cache, {warm:.2f} s loading the cache"
        )
        figures |= {"first call compile": (cold, "s"), "first call load": (warm, "s")}
    write_result("blend", args, figures)


def spec_of(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``args.sources`` sparse datasets of ``args.tokens`` tokens under ``root/megatron`` and the training section
    over them; exits naming ``--tokens`` when a split holds no token (megatron-core 0.16.1 would loop forever)."""
    from pipeline.megatron.format import bin_path, idx_path, pack_index
    from pipeline.megatron.reader import read_index
    from pipeline.training_indices.describe import SPLITS, document_range

    rng, total = np.random.default_rng(0), 0
    (root / "megatron").mkdir(parents=True, exist_ok=True)
    for k in range(args.sources):
        share = args.tokens / args.sources * (0.5 + k / max(1, args.sources - 1))  # 0.5x .. 1.5x
        lengths = np.clip(rng.lognormal(6.4, 1.1, size=int(share / 1100) + 1), 1, 200_000).astype(np.int32)
        Path(idx_path(f"{root}/megatron/s{k}")).write_bytes(pack_index(np.uint16, lengths, np.arange(len(lengths) + 1)))
        with open(bin_path(f"{root}/megatron/s{k}"), "wb") as f:
            f.truncate(int(lengths.sum(dtype=np.int64)) * 2)
        total += int(lengths.sum(dtype=np.int64))
    train = int(total * args.epochs / args.seq_length)
    spec = {"root": str(root), "names": [f"s{k}" for k in range(args.sources)], "tokens": total}
    w = np.arange(1.0, args.sources + 1)  # as merge-blend writes them into blend.json (normalised once)
    spec["weights"] = (w / float(w.sum())).tolist()
    spec["training"] = {"sequence_length": args.seq_length, "samples": [train, train // 100, train // 1000]}
    spec["training"] |= {"split": "969, 30, 1", "random_seed": 1234, "tokenizer": TOKENIZER}
    for task in plan_of(spec).gpt:
        lengths = read_index(task.prefix)[1]
        lo, hi = document_range(task.bookends, len(lengths))
        if int(lengths[lo:hi].sum(dtype=np.int64)) == 0:
            raise SystemExit(
                f"--tokens: at {args.tokens:g} tokens the {SPLITS[task.split]} split of source {task.source} holds "
                "no document, which megatron-core's builder never finishes; give more tokens (1e7 is enough)"
            )
    return spec


def plan_of(spec: dict[str, Any]) -> Any:
    """Our plan of the spec's builds."""
    from pipeline.config import TrainingConfig
    from pipeline.training_indices.plan import make_plan

    n, root, training = spec["names"], spec["root"], TrainingConfig(**spec["training"])
    return make_plan(
        training, root, n, [f"megatron/{x}" for x in n], [f"{root}/megatron/{x}" for x in n], spec["weights"]
    )


def build(side: str, spec: dict[str, Any], cache: str) -> None:
    """One side's files in ``cache``: ours (the stage's tasks in turn) or megatron-core's builder."""
    if side == "ours":
        from pipeline.training_indices.tasks import build_blend, build_gpt

        plan = plan_of(spec)
        os.makedirs(cache, exist_ok=True)
        rows = {(t.source, t.split): build_gpt(t, cache)["samples"] for t in plan.gpt}
        for blended in plan.blends:
            build_blend(blended, [rows[(g.source, g.split)] for g in blended.gpt], cache)
        return
    import torch

    from pipeline.blend.megatron_args import megatron_data_path
    from pipeline.config import TrainingConfig
    from tests.megatron_builder import megatron_build

    torch.distributed.get_rank = lambda *a: 0  # BlendedDataset asks even without a process group
    path = megatron_data_path(spec["weights"], [f"{spec['root']}/megatron/{n}" for n in spec["names"]])
    megatron_build(TrainingConfig(**spec["training"]), path, Path(cache), TOKENIZER)


def child(side: str, spec: dict[str, Any], cache: str) -> dict[str, float]:
    """One side's builds in a process pinned to one core, a first and a second (a reused worker), each into an
    empty cache: wall and CPU seconds."""
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    warnings.filterwarnings("ignore")  # megatron-core warns about missing Apex / Transformer Engine
    ours, megatron = "pipeline.training_indices.tasks", "megatron.core.datasets.blended_megatron_dataset_builder"
    importlib.import_module(ours if side == "ours" else megatron)  # imports outside the timing, both sides
    found = {}
    for wall, cpu, into in (("seconds", "cpu", cache), ("again", "cpu_again", cache + "-again")):
        started, cpu_started = time.perf_counter(), time.process_time()
        build(side, spec, into)
        found[wall], found[cpu] = time.perf_counter() - started, time.process_time() - cpu_started
    return {**found, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def training_indices(args: argparse.Namespace, work: Path) -> None:
    """Both sides' builds in ``work``, alternating, each in a fresh process into empty caches, ``--repeat`` times;
    the ratios of their medians."""
    spec = spec_of(work / "run", args)
    print(f"{spec['tokens']:,} tokens in {len(spec['names'])} sources; samples {spec['training']['samples']}")
    runs: dict[str, list[dict]] = {"megatron": [], "ours": []}
    differ: list[str] = []
    for r in range(args.repeat):  # a fresh process per side and round, so every cache directory starts empty
        for side in runs:
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                runs[side].append(pool.apply(child, (side, spec, str(work / f"{side}_cache{r}"))))
        for a, b in ((work / f"megatron_cache{r}{s}", work / f"ours_cache{r}{s}") for s in ("", "-again")):
            count = len(os.listdir(a))
            differ += sum(filecmp.cmpfiles(a, b, sorted({*os.listdir(a), *os.listdir(b)}), shallow=False)[1:], [])
    keys = ("seconds", "again", "cpu", "cpu_again")
    medians = {side: {k: statistics.median(r[k] for r in rs) for k in keys} for side, rs in runs.items()}
    for side, rs in runs.items():
        spread = ", ".join(f"{k} {min(r[k] for r in rs):.3f}..{max(r[k] for r in rs):.3f} s" for k in keys)
        print(f"{side:>9} ({len(rs)} runs, one core, peak RSS {max(r['peak_mb'] for r in rs):.0f} MB): {spread}")
    ratios = {k: medians["ours"][k] / medians["megatron"][k] for k in keys}
    print(
        f"ratio ours / megatron-core (medians): wall {ratios['seconds']:.2f}x fresh, {ratios['again']:.2f}x again; "
        f"CPU {ratios['cpu']:.2f}x fresh, {ratios['cpu_again']:.2f}x again; {count} files identical: {not differ}"
    )
    if differ:
        raise SystemExit(f"files differ: {sorted(set(differ))}")
    figures = {f"{k} ours/megatron-core": (v, "x") for k, v in ratios.items()}
    write_result("training_indices", args, {**figures, "identical files": (count, "files")})


def main() -> None:
    first = arguments(__doc__)
    first.add_argument("part", choices=PARTS, help="what to measure")
    first.add_argument("rest", nargs=argparse.REMAINDER, help="its options (python -m bench megatron PART --help)")
    part, rest = vars(first.parse_args()).values()
    parser = arguments(__doc__, **PARTS[part])
    parser.prog = f"python -m bench megatron {part}"
    if part == "blend":
        parser.add_argument("--datasets", type=int, nargs="+", default=[3, 300], help="dataset counts (default 3 300)")
        return blend(parser.parse_args(rest))
    args = parser.parse_args(rest)
    with tempfile.TemporaryDirectory(prefix="bench-training-indices-") as scratch:  # --work: kept
        return training_indices(args, Path(args.work or scratch))


if __name__ == "__main__":
    main()
