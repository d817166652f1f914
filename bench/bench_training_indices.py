"""Benchmark: the training-indices files, ours vs megatron-core 0.16.1's BlendedMegatronDatasetBuilder.

Usage: python -m bench training_indices [--tokens 1e9] [--sources 5] [--seq-length 4096]
    [--epochs 1.3] [--repeat 5] [--work DIR]

How it measures: docs/benchmarks.md, Method notes, training_indices.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import arguments, child_command, child_env, write_result

TOKENIZER = {"class": "HuggingFaceTokenizer", "tokenizer_path": ["/models/bench"]}


def synthesize(root: Path, tokens: float, sources: int, seed: int = 0) -> list[str]:
    """``root/megatron/s<k>.{idx,bin}`` holding about ``tokens / sources`` tokens each; their names."""
    from pipeline.megatron.format import bin_path, idx_path, pack_index

    rng = np.random.default_rng(seed)
    names = []
    (root / "megatron").mkdir(parents=True, exist_ok=True)
    for k in range(sources):
        name = f"s{k}"
        share = tokens / sources * (0.5 + k / max(1, sources - 1))  # unequal sources: 0.5x .. 1.5x
        lengths = np.clip(rng.lognormal(6.4, 1.1, size=int(share / 1100) + 1), 1, 200_000).astype(np.int32)
        prefix = str(root / "megatron" / name)
        Path(idx_path(prefix)).write_bytes(pack_index(np.uint16, lengths, np.arange(len(lengths) + 1)))
        with open(bin_path(prefix), "wb") as f:
            f.truncate(int(lengths.sum(dtype=np.int64)) * 2)
        names.append(name)
    return names


def plan_config(root: Path, names: list[str], seq_length: int, epochs: float) -> dict:
    from pipeline.megatron.reader import read_index

    tokens = sum(int(read_index(str(root / "megatron" / n))[1].sum(dtype=np.int64)) for n in names)
    train = int(tokens * epochs / seq_length)
    weights = [float(w) for w in range(1, len(names) + 1)]
    return {
        "root": str(root),
        "names": names,
        "weights": weights,
        "tokens": tokens,
        "training": {
            "sequence_length": seq_length,
            "samples": [train, train // 100, train // 1000],
            "split": "969, 30, 1",
            "random_seed": 1234,
            "tokenizer": TOKENIZER,
        },
    }


def plan_of(spec: dict) -> Any:
    """Our plan of the spec's builds (pipeline.training_indices.plan)."""
    from pipeline.config import TrainingConfig
    from pipeline.training_indices.plan import make_plan

    names, root = spec["names"], spec["root"]
    prefixes = [f"{root}/megatron/{n}" for n in names]
    return make_plan(
        TrainingConfig(**spec["training"]), root, names, [f"megatron/{n}" for n in names], prefixes, spec["weights"]
    )


def check_splits(spec: dict, tokens: float) -> None:
    """Exit naming ``--tokens`` when a split of a source holds no token: megatron-core 0.16.1 would loop forever
    on it (``GPTDataset._get_num_epochs``), where ours stops with an error."""
    from pipeline.megatron.reader import read_index
    from pipeline.training_indices.describe import SPLITS, document_range

    for task in plan_of(spec).gpt:
        lengths = read_index(task.prefix)[1]
        lo, hi = document_range(task.bookends, len(lengths))
        if int(lengths[lo:hi].sum(dtype=np.int64)) == 0:
            raise SystemExit(
                f"--tokens: at {tokens:g} tokens the {SPLITS[task.split]} split of source {task.source} holds no "
                "document, which megatron-core's builder never finishes; give more tokens (1e7 is enough)"
            )


def run_ours(spec: dict, cache: str) -> None:
    from pipeline.training_indices.tasks import build_blend, build_gpt

    plan = plan_of(spec)
    os.makedirs(cache, exist_ok=True)
    rows = {(t.source, t.split): build_gpt(t, cache)["samples"] for t in plan.gpt}
    for blend in plan.blends:
        build_blend(blend, [rows[(g.source, g.split)] for g in blend.gpt], cache)
    print(json.dumps({"data_path": plan.data_path}))


def run_megatron(spec: dict, cache: str) -> None:
    import torch

    from pipeline.blend.megatron_args import megatron_data_path
    from pipeline.config import TrainingConfig
    from tests.megatron_builder import megatron_build

    torch.distributed.get_rank = lambda *a: 0  # BlendedDataset asks even without a process group
    # the weights merge-blend writes into blend.json (normalised once), as the stage reads them
    w = np.asarray(spec["weights"], dtype=np.float64)
    path = megatron_data_path((w / float(w.sum())).tolist(), [f"{spec['root']}/megatron/{n}" for n in spec["names"]])
    megatron_build(TrainingConfig(**spec["training"]), path, Path(cache), TOKENIZER)


def child(side: str, spec_file: str, cache: str) -> None:
    """One side's builds, pinned to one core: a first build and a second in the same process (a reused Spark
    worker, compiled code loaded), each into its own empty cache; prints their wall and CPU seconds as JSON."""
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    spec = json.loads(Path(spec_file).read_text())
    if side == "ours":  # imports outside the timing, both sides
        import pipeline.training_indices.tasks  # noqa: F401

        spec["weights"] = (np.asarray(spec["weights"]) / float(np.sum(spec["weights"]))).tolist()
    else:
        import megatron.core.datasets.blended_megatron_dataset_builder  # noqa: F401
    found = {}
    for wall, cpu, into in (("seconds", "cpu", cache), ("again", "cpu_again", cache + "-again")):
        started, cpu_started = time.perf_counter(), time.process_time()
        (run_ours if side == "ours" else run_megatron)(spec, into)
        found[wall], found[cpu] = time.perf_counter() - started, time.process_time() - cpu_started
    print(json.dumps({**found, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def measure(side: str, spec_file: Path, cache: Path) -> dict:
    """One side's figures from a fresh child process, its caches emptied first."""
    for d in (cache, Path(f"{cache}-again")):
        shutil.rmtree(d, ignore_errors=True)  # megatron-core loads files it finds instead of building them
    cmd = [*child_command(__spec__), "--child", side, str(spec_file), str(cache)]
    out = subprocess.run(cmd, env=child_env(), check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def same_files(a: Path, b: Path) -> tuple[int, list[str]]:
    """The number of files in ``a`` and the names that differ between ``a`` and ``b`` (or exist in one only)."""
    files = sorted(os.listdir(a))
    if sorted(os.listdir(b)) != files:
        return len(files), sorted(set(files).symmetric_difference(os.listdir(b)))
    _, mismatch, errors = filecmp.cmpfiles(a, b, files, shallow=False)
    return len(files), mismatch + errors


def main() -> None:
    parser = arguments(__doc__, tokens=1e9, sources=5, seq_length=4096, epochs=1.3, repeat=5, work="")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    if args.work:
        return compare(args, Path(args.work))
    with tempfile.TemporaryDirectory(prefix="bench-training-indices-") as work:
        return compare(args, Path(work))


def compare(args: argparse.Namespace, work: Path) -> None:
    """Both sides' builds in ``work``, alternating, ``--repeat`` times; the ratios of their medians."""
    names = synthesize(work / "run", args.tokens, args.sources)
    spec = plan_config(work / "run", names, args.seq_length, args.epochs)
    check_splits(spec, args.tokens)
    spec_file = work / "spec.json"
    spec_file.write_text(json.dumps(spec))
    print(f"{spec['tokens']:,} tokens in {len(names)} sources; samples {spec['training']['samples']}")
    runs: dict[str, list[dict]] = {"megatron": [], "ours": []}
    differ: list[str] = []
    for _ in range(args.repeat):
        for side in runs:  # alternating, so that both sides see the same load on a shared machine
            runs[side].append(measure(side, spec_file, work / f"{side}_cache"))
        for suffix in ("", "-again"):
            count, bad = same_files(work / f"megatron_cache{suffix}", work / f"ours_cache{suffix}")
            differ += bad
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


if __name__ == "__main__":
    main()
