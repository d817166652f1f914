"""Re-deciding the filter stage from its signals (issue #45, item 3: at most 10 % of the filter stage's time): the
real corpus (bench/real_corpus.py) through ingest + filter with conf/dataproc.yaml's filter list on local[2], then
the filter stage again with ``gopher_quality.min_doc_words`` changed (``--force filter``: decided from
``filter/signals/``). Prints both filter stage times (the manifest's seconds) and their ratio, and the signals
table's size per GB of input text. ``--corpus release``: the release corpus (bench/release_corpus.py) instead.

Run: python -m bench filter_redecide [--mb 50] [--min-doc-words 100] [--corpus release]
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from bench import real_corpus, release_corpus
from bench.harness import DATA, dataproc_filters, run_config, session, write_result
from pipeline.run.manifest import Manifest
from pipeline.run.registry import FILTER, INGEST
from pipeline.run.runner import run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext


def filter_seconds(spark, raw: Path, out: Path, min_doc_words: int, force: str | None) -> tuple[float, dict]:
    """The filter stage's seconds and counts of a run of ingest + filter over ``raw`` into ``out``."""
    filters = [
        {**f, "min_doc_words": min_doc_words} if f["name"] == "gopher_quality" else f for f in dataproc_filters()
    ]
    ctx = RunContext(run_config(out, raw, filters), spark=spark)
    results = run_stages(ctx, log=lambda *_: None, stages=(INGEST, FILTER), force=force)
    return float(Manifest(str(out)).data["stages"]["filter"]["seconds"]), results["filter"].counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=50, help="MB of real documents (default 50)")
    parser.add_argument("--min-doc-words", type=int, default=100, help="the changed threshold (default 100; 50 first)")
    parser.add_argument("--corpus", choices=("real", "release"), default="real", help="the corpus (default real)")
    args = parser.parse_args()
    raw = real_corpus.build(args.mb) if args.corpus == "real" else release_corpus.build(args.mb)
    out = DATA / "run-filter-redecide"
    shutil.rmtree(out, ignore_errors=True)
    spark = session()
    started = time.time()
    measured, counts = filter_seconds(spark, raw, out, 50, None)
    redecided, again = filter_seconds(spark, raw, out, args.min_doc_words, "filter")
    assert again["decision"].startswith("re-decided"), again["decision"]
    size = sum(p.stat().st_size for p in (out / layout.FILTER_SIGNALS).rglob("*.parquet"))
    text = sum(p.stat().st_size for p in raw.glob("*.jsonl")) if raw.is_dir() else raw.stat().st_size
    print(f"filter stage, measuring every document: {measured:.1f} s ({counts['decision']})")
    print(f"filter stage, min_doc_words 50 -> {args.min_doc_words}: {redecided:.1f} s ({again['decision']})")
    print(f"re-decided / measured: {redecided / measured:.3f}")
    print(f"signals table: {size / 1e6:.2f} MB for {text / 1e6:.1f} MB of input ({size / text * 1000:.1f} MB per GB)")
    print(f"whole bench: {time.time() - started:.0f} s, load {os.getloadavg()[0]:.2f} (1 min) at the end")
    write_result(
        "filter_redecide",
        args,
        {
            "measured": (measured, "s"),
            "re-decided": (redecided, "s"),
            "re-decided / measured": (redecided / measured, "x"),
            "signals per GB of input": (size / text * 1000, "MB"),
        },
    )


if __name__ == "__main__":
    main()
