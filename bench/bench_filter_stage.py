"""What the filter stage adds to a run (issue #29, item 8: at most 50 % of ingest + dedup): the same real corpus
(corpora/real.py) through ingest + dedup, then through ingest + filter + dedup with conf/dataproc.yaml's
filter list (language ID, Gopher repetition and quality, C4, FineWeb, PII), local[2], in one process.

A first run without filters warms the JVM, the page cache and the kernels and is not reported. Prints seconds
per stage of both runs, the filter stage's seconds over the first run's ingest + dedup, and the
second run's whole time over the first's (dedup has less to do after filtering, so both are shown).

Run: python -m bench filter_stage [--mb 200]
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import yaml

from bench.harness import DATA, REPO, ProcessTree, arguments, run_config, session, write_result
from corpora import real
from pipeline.run.manifest import Manifest
from pipeline.run.registry import DEDUP, FILTER, INGEST
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext


def run(spark, raw: Path, out: Path, filters: list | None) -> tuple[dict[str, float], dict[str, float]]:
    """Seconds per stage of a fresh run of ingest (+ filter) + dedup over ``raw``, and CPU seconds per stage of
    this process's tree (the JVM and the Python workers; a short-lived worker's last moments are missed)."""
    shutil.rmtree(out, ignore_errors=True)
    ctx = RunContext(run_config(out, raw, filters), spark=spark)
    started = time.time()
    stages = (INGEST, FILTER, DEDUP) if filters else (INGEST, DEDUP)
    cpu: dict[str, float] = {}
    with ProcessTree() as tree:

        def log(message: str) -> None:  # "[stage] running" ... "[stage] done in ..."
            tree.sample()
            name = message[1:].partition("]")[0]
            cpu[name] = tree.cpu() - cpu.get(name, 0.0) if " done in " in message else tree.cpu()

        run_stages(ctx, log=log, stages=stages)
    seconds = {name: info["seconds"] for name, info in Manifest(str(out)).data["stages"].items()}
    seconds["total"] = round(time.time() - started, 1)
    return seconds, cpu


def main() -> None:
    args = arguments(__doc__, mb=200.0).parse_args()
    raw = real.build(args.mb)
    filters = yaml.safe_load((REPO / "conf" / "dataproc.yaml").read_text())["filter"]
    spark = session()
    run(spark, raw, DATA / "run-filter-stage-off", None)  # warm-up: JVM, page cache, numba cache (not reported)
    plain, plain_cpu = run(spark, raw, DATA / "run-filter-stage-off", None)
    filtered, filtered_cpu = run(spark, raw, DATA / "run-filter-stage-on", filters)
    spark.stop()
    names = [f["name"] for f in filters]
    print(f"{raw} ({raw.stat().st_size / 1e6:.0f} MB), local[2], load {os.getloadavg()[0]:.2f}; filters: {names}")
    print(f"{'run':<24}" + "".join(f"{c:>9}" for c in ("ingest", "filter", "dedup", "total")))
    for name, secs in (("ingest + dedup", plain), ("ingest + filter + dedup", filtered)):
        print(f"{name:<24}" + "".join(f"{secs.get(c, 0.0):>9.1f}" for c in ("ingest", "filter", "dedup", "total")))
    base_cpu = plain_cpu.get("ingest", 0.0) + plain_cpu.get("dedup", 0.0)
    ratios = {
        "filter/(ingest+dedup)": (filtered["filter"] / (plain["ingest"] + plain["dedup"]), "x"),
        "whole run": (filtered["total"] / plain["total"], "x"),
        "filter/(ingest+dedup) CPU": (filtered_cpu.get("filter", 0.0) / base_cpu if base_cpu else float("nan"), "x"),
    }
    for label, (value, _) in ratios.items():
        print(f"{label}: {value:.2f}")
    write_result("filter_stage", args, {**ratios, "filter stage": (filtered["filter"], "s")})


if __name__ == "__main__":
    main()
