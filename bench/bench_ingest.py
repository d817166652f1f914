"""Ingest throughput on local[2] (issue: foundation), against a single-process JSONL parse of the same file.

Run: python -m bench ingest [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time

from bench.harness import DATA, corpus, session, write_result
from pipeline.config import load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext


def baseline(path) -> float:
    """Seconds for one Python process to read and json-parse every line (no Spark)."""
    started = time.time()
    with open(path, "rb") as f:
        for line in f:
            json.loads(line)["text"].encode()
    return time.time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=200)
    args = parser.parse_args()
    raw = corpus(args.mb)
    size_mb = raw.stat().st_size / 1e6
    out = DATA / "run-ingest"
    shutil.rmtree(out, ignore_errors=True)
    spark = session()
    ctx = RunContext(
        load_config_text(f"output: {out}\ntokenizer: {{train: true}}\nsources: [{{name: bench, paths: ['{raw}']}}]\n"),
        spark=spark,
    )
    started = time.time()
    counts = run_stages(ctx, only="ingest", log=lambda *_: None)["ingest"].counts
    seconds = time.time() - started
    base = baseline(raw)
    print(
        f"file: {raw} ({size_mb:.0f} MB, {counts['sources']['bench']['documents_read']} records, "
        f"{counts['splits']} splits)"
    )
    print(f"ingest stage on local[2]: {seconds:.1f} s = {size_mb / seconds:.1f} MB/s")
    print(f"baseline, one process json.loads per line: {base:.1f} s = {size_mb / base:.1f} MB/s")
    print(f"ratio stage/baseline: {base / seconds:.2f}")
    stage = {"stage": (size_mb / seconds, "MB/s"), "stage seconds": (seconds, "s")}
    write_result(
        "ingest", args, {**stage, "json.loads": (size_mb / base, "MB/s"), "stage/baseline": (base / seconds, "x")}
    )
    spark.stop()


if __name__ == "__main__":
    main()
