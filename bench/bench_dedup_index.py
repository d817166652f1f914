"""The cost of a dedup run against an index holding 10x its size, as a ratio to the same run without one (#17).

One corpus of 11 x ``--mb`` MB (real prose with planted near-duplicates, bench/corpus.py) is cut into
a history (the first 10/11 of its lines) and today's slice (the rest). The history is deduplicated
and committed to a fresh index; then today's slice is deduplicated twice on local[2], in the same
process: without the index (the baseline) and with it; the commit of today's documents is timed too.
Run: python -m bench dedup_index [--mb 5]
"""

from __future__ import annotations

import argparse
import shutil
import time

from bench.harness import DATA, config_text, corpus, session, write_result
from pipeline.config import load_config_text
from pipeline.dedup.index.spark.commit import commit_run, describe
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext


def split_corpus(raw, history, today) -> tuple[int, int]:
    """Write the first 10/11 of ``raw``'s lines to ``history`` and the rest to ``today``; line counts."""
    lines = raw.read_bytes().splitlines(keepends=True)
    cut = len(lines) * 10 // 11
    history.write_bytes(b"".join(lines[:cut]))
    today.write_bytes(b"".join(lines[cut:]))
    return cut, len(lines) - cut


def dedup_seconds(spark, raw, out, index=None) -> tuple[float, dict, RunContext]:
    """Ingest (untimed), then the dedup stage: its seconds, counts and context."""
    shutil.rmtree(out, ignore_errors=True)
    overrides = [f"dedup.index={index}"] if index else []
    ctx = RunContext(load_config_text(config_text(raw, out), overrides), spark=spark)
    run_stages(ctx, only="ingest", log=lambda *_: None)
    started = time.time()
    counts = run_stages(ctx, only="dedup", log=lambda *_: None)["dedup"].counts
    return time.time() - started, counts, ctx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=5, help="today's slice in MB (the index holds 10x this)")
    args = parser.parse_args()
    raw = corpus(args.mb * 11, seed=17)
    work = DATA / "dedup-index"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    history, today = work / "history.jsonl", work / "today.jsonl"
    n_history, n_today = split_corpus(raw, history, today)
    index = work / "index"
    spark = session()
    built, _, ctx = dedup_seconds(spark, history, work / "run-history", index)
    started = time.time()
    commit_run(ctx)
    print(
        f"index: {n_history} history documents deduplicated in {built:.1f} s, committed in "
        f"{time.time() - started:.1f} s"
    )
    print(describe(str(index)).splitlines()[2])
    base, plain, _ = dedup_seconds(spark, today, work / "run-plain")
    with_index, counts, ctx = dedup_seconds(spark, today, work / "run-indexed", index)
    started = time.time()
    commit_run(ctx)
    commit = time.time() - started
    print(
        f"today: {n_today} documents ({args.mb:g} MB); without index: {base:.1f} s, removed "
        f"{plain['duplicates_removed']}; with index: {with_index:.1f} s, removed {counts['duplicates_removed']} + "
        f"{counts['duplicates_of_earlier_runs']} duplicates of earlier runs; commit {commit:.1f} s"
    )
    print(
        f"ratio with index / without (dedup stage): {with_index / base:.2f}; "
        f"including the commit: {(with_index + commit) / base:.2f}"
    )
    ratios = {"with/without": (with_index / base, "x"), "with commit/without": ((with_index + commit) / base, "x")}
    found = {"found": (counts["duplicates_of_earlier_runs"], "documents")}
    write_result("dedup_index", args, {**ratios, **found})
    spark.stop()


if __name__ == "__main__":
    main()
