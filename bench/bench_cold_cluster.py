"""A fresh standalone cluster's first run against its second: the cold/warm ratio, with and without the numba cache
that ``deploy/build_artifacts.sh --numba-cache`` ships (issue #47, 2; goal <= 1.15).

How it measures: docs/benchmarks.md, Fresh clusters: cold against warm (issue 47, item 2).

    python -m bench cold_cluster --mb 20 [--modes zip,cache]
"""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import psutil
import yaml

from bench.harness import DATA, FIXTURES, REPO, ProcessTree, arguments, run_logged, write_result
from bench.standalone import Cluster, build_zip, submit_command
from bench.vs_corpus import prefix

SHIPPED_NAME = "numba-cache"


def config(data: Path, out: Path) -> dict:
    """conf/local.yaml's filters and dedup over the JSONL file ``data``, GPT-2's tokenizer from ../shared/fixtures."""
    base = yaml.safe_load((REPO / "conf" / "local.yaml").read_text())
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
    }
    return {
        "output": str(out),
        "spark": {"app_name": "bench-cold-cluster", "settings": settings, "speedups": ["zip_rescans", "gc_freeze"]},
        "sources": [{"name": "real", "paths": [str(data)], "format": "jsonl"}],
        "ingest": {"partitions": 4},
        "filter": base["filter"],
        "dedup": base["dedup"],
        "tokenizer": {
            "vocab": str(FIXTURES / "gpt2_vocab.json"),
            "merges": str(FIXTURES / "gpt2_merges.txt"),
            "special_tokens": ["<|endoftext|>"],
        },
        "tokenize": {"partitions": 4},
    }


def submit(cluster: Cluster, dist: Path, config_path: Path, log: Path, shipped: bool) -> tuple[float, float]:
    """One spark-submit of the run to ``cluster`` (outputs removed first): its wall seconds, and the CPU seconds
    of the driver, the executors and their Python workers (and of the daemons, this run's share)."""
    shutil.rmtree(yaml.safe_load(config_path.read_text())["output"], ignore_errors=True)
    ship = ("--archives", f"{dist / 'numba-cache.tar.gz'}#{SHIPPED_NAME}")
    ship += ("--conf", f"spark.executorEnv.PIPELINE_NUMBA_SHIPPED={SHIPPED_NAME}")
    cmd = submit_command(cluster, dist, config_path, "1g", ship if shipped else ())
    daemons = cluster.pids()
    before = sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in daemons)  # the daemons' own CPU so far
    run, tree = run_logged(cmd, log, cluster.env, config_path.parent, partial(ProcessTree, also=daemons))
    wall = run["wall_s"]
    return wall, tree.cpu() - before


def measure(work: Path, mode: str, dist: Path, config_path: Path) -> dict[str, float]:
    """A fresh cluster with empty caches: the run twice; cold and warm seconds per stage and in all."""
    root = work / f"cluster-{mode}"
    shutil.rmtree(root, ignore_errors=True)
    cluster = Cluster(root, workers=2, cores=1, memory="1536m")
    cluster.env.pop("NUMBA_CACHE_DIR", None)
    cluster.env["XDG_CACHE_HOME"] = str(root / "xdg")  # nothing cached: no numba kernels, no class archive
    figures: dict[str, float] = {}
    try:
        cluster.start()
        for run in ("cold", "warm"):
            wall, cpu = submit(cluster, dist, config_path, root / f"{run}.log", mode == "cache")
            figures[run], figures[f"{run} CPU"] = wall, cpu
            report = json.loads((Path(yaml.safe_load(config_path.read_text())["output"]) / "report.json").read_text())
            for row in report["timeline"]["stages"]:
                figures[f"{run} {row['stage']}"] = float(row["seconds"])
            print(f"{mode} {run}: {wall:.1f} s, {cpu:.1f} CPU s", flush=True)
    finally:
        cluster.stop()
    return figures


def main() -> None:
    parser = arguments(__doc__, corpus=DATA / "real-corpus-41.4273mb.jsonl", mb=20.0, work=DATA / "cold-cluster")
    parser.add_argument("--modes", default="zip,cache", help="zip (the zip alone), cache (the zip and the cache)")
    args = parser.parse_args()
    modes = args.modes.split(",")
    args.work.mkdir(parents=True, exist_ok=True)
    data = prefix(args.corpus, args.mb, args.work / "corpus")
    config_path = args.work / "pipeline.yaml"
    config_path.write_text(yaml.safe_dump(config(data, args.work / "run"), sort_keys=False))
    figures: dict[str, tuple[float, str]] = {"input MB": (data.stat().st_size / 1e6, "MB")}
    for mode in modes:
        dist = build_zip(args.work / f"dist-{mode}", numba_cache=mode == "cache")
        seconds = measure(args.work, mode, dist, config_path)
        ratio, cpu_ratio = seconds["cold"] / seconds["warm"], seconds["cold CPU"] / seconds["warm CPU"]
        print(f"{mode}: cold {seconds['cold']:.1f} s, warm {seconds['warm']:.1f} s, cold/warm {ratio:.2f}", end="")
        print(f" (goal <= 1.15); CPU {seconds['cold CPU']:.0f} / {seconds['warm CPU']:.0f} s = {cpu_ratio:.2f}")
        figures.update({f"{mode} {k}": (v, "s") for k, v in seconds.items()})
        figures[f"{mode} cold/warm"] = (ratio, "x")
        figures[f"{mode} CPU cold/warm"] = (cpu_ratio, "x")
    write_result("cold_cluster", args, figures)


if __name__ == "__main__":
    main()
