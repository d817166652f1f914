"""A fresh standalone cluster's first run against its second: the cold/warm ratio, with and without the numba cache
that ``deploy/build_artifacts.sh --numba-cache`` ships (issue #47, 2; goal <= 1.15).

How it measures: docs/benchmarks.md, Fresh clusters: cold against warm (issue 47, item 2).

    python -m bench cold_cluster --mb 20 [--modes zip,cache]
"""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import psutil
import yaml

from bench.harness import DATA, REPO, ProcessTree, arguments, write_result
from bench.standalone import Cluster, build_zip, cluster_config, run_job
from bench.vs_corpus import prefix
from corpora.store import FIXTURES

SHIPPED_NAME = "numba-cache"


def config(data: Path, out: Path) -> dict:
    """conf/local.yaml's filters and dedup over the JSONL file ``data``, GPT-2's tokenizer from ../shared/fixtures."""
    base = yaml.safe_load((REPO / "conf" / "local.yaml").read_text())
    tokenizer = {"vocab": str(FIXTURES / "gpt2_vocab.json"), "merges": str(FIXTURES / "gpt2_merges.txt")}
    return cluster_config(
        "bench-cold-cluster",
        out,
        [{"name": "real", "paths": [str(data)], "format": "jsonl"}],
        {"spark.sql.shuffle.partitions": "8"},
        ingest={"partitions": 4},
        filter=base["filter"],
        dedup=base["dedup"],
        tokenizer={**tokenizer, "special_tokens": ["<|endoftext|>"]},
        tokenize={"partitions": 4},
    )


def measure(work: Path, mode: str, dist: Path, data: Path) -> dict[str, float]:
    """A fresh cluster with empty caches: the run twice; cold and warm seconds per stage and in all. A run's CPU
    seconds: the driver's, the executors' and their Python workers' (and the daemons', this run's share)."""
    root = work / f"cluster-{mode}"
    shutil.rmtree(root, ignore_errors=True)
    cluster = Cluster(root, workers=2, cores=1, memory="1536m")
    cluster.env.pop("NUMBA_CACHE_DIR", None)
    cluster.env["XDG_CACHE_HOME"] = str(root / "xdg")  # nothing cached: no numba kernels, no class archive
    ship = ("--archives", f"{dist / 'numba-cache.tar.gz'}#{SHIPPED_NAME}")
    ship += ("--conf", f"spark.executorEnv.PIPELINE_NUMBA_SHIPPED={SHIPPED_NAME}")
    figures: dict[str, float] = {}
    try:
        cluster.start()
        daemons = cluster.pids()
        for run in ("cold", "warm"):
            before = sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in daemons)  # the daemons' CPU so far
            extra, tree = ship if mode == "cache" else (), partial(ProcessTree, also=daemons)
            done, sampled, report = run_job(
                cluster, dist, config(data, work / "run"), root / f"{run}.yaml", "1g", extra, tree
            )
            figures[run], figures[f"{run} CPU"] = done["wall_s"], sampled.cpu() - before
            for row in report["timeline"]["stages"]:
                figures[f"{run} {row['stage']}"] = float(row["seconds"])
            print(f"{mode} {run}: {figures[run]:.1f} s, {figures[f'{run} CPU']:.1f} CPU s", flush=True)
    finally:
        cluster.stop()
    return figures


def main() -> None:
    parser = arguments(__doc__, corpus=DATA / "real-corpus-41.4273mb.jsonl", mb=20.0, work=DATA / "cold-cluster")
    parser.add_argument("--modes", default="zip,cache", help="zip (the zip alone), cache (the zip and the cache)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    data = prefix(args.corpus, args.mb, args.work / "corpus")
    figures: dict[str, tuple[float, str]] = {"input MB": (data.stat().st_size / 1e6, "MB")}
    for mode in args.modes.split(","):
        dist = build_zip(args.work / f"dist-{mode}", numba_cache=mode == "cache")
        seconds = measure(args.work, mode, dist, data)
        ratio, cpu_ratio = seconds["cold"] / seconds["warm"], seconds["cold CPU"] / seconds["warm CPU"]
        print(f"{mode}: cold {seconds['cold']:.1f} s, warm {seconds['warm']:.1f} s, cold/warm {ratio:.2f}", end="")
        print(f" (goal <= 1.15); CPU {seconds['cold CPU']:.0f} / {seconds['warm CPU']:.0f} s = {cpu_ratio:.2f}")
        figures.update({f"{mode} {k}": (v, "s") for k, v in seconds.items()})
        figures[f"{mode} cold/warm"] = (ratio, "x")
        figures[f"{mode} CPU cold/warm"] = (cpu_ratio, "x")
    write_result("cold_cluster", args, figures)


if __name__ == "__main__":
    main()
