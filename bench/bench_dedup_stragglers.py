"""A few 2-4 MB documents among many small ones: the dedup features step's task times in Spark (issue #32).

Run: ``python -m bench dedup_stragglers [--mb 40] [--big 2,2.5,3,4] [--file-mb 4]``.

The table: the first ``--mb`` MB of the real corpus (``bench/real_corpus.py``, documents of at most 100 kB) with
``--big`` documents of that many MB (real text joined) placed together in the middle, written as Parquet files
of about ``--file-mb`` MB of text each, in document order (as ingest writes one file per input split). The step
is the stage's own: ``doc_features`` over ``mapInArrow`` (defaults of ``dedup``), then a count, on ``local[2]``,
one file per task (as on a cluster with many cores). After a warm-up run, the previous path
(pipeline/dedup/hashes.py at ``--baseline-rev``: a document over ``max_shingles`` shingled again in Python)
and the new one alternate,
twice each, in one Spark application. Per task, Spark's status API gives its run time and input bytes; printed:
the median task, the largest and its input bytes.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench import real_corpus
from bench.bench_features_sizes import BASELINE_REV, params, previous_path, take
from bench.harness import baseline_function, child_env, write_result
from pipeline.dedup.batches import doc_features
from pipeline.spark.worker_task import per_task


def table(megabytes: float, big: list[float]) -> list[str]:
    """Small real documents with the large ones (joined real text) in the middle."""
    texts = [r["text"] for r in real_corpus.read(real_corpus.build(100))]
    small = take(texts, megabytes)
    rest = "\n\n".join(texts[len(small) :])
    large, at = [], 0
    for mb in big:
        large.append(rest[at : at + int(mb * 1e6)])
        at += int(mb * 1e6)
    half = len(small) // 2
    return small[:half] + large + small[half:]


def write(texts: list[str], directory: Path, file_mb: float) -> list[range]:
    """Parquet files of about ``file_mb`` MB of text, in order; the doc_id range of each file."""
    ranges, start, size = [], 0, 0
    for i, t in enumerate(texts):
        size += len(t.encode("utf-8"))
        if size >= file_mb * 1e6 or i == len(texts) - 1:
            part = pa.table({"doc_id": pa.array(range(start, i + 1), pa.int64()), "text": texts[start : i + 1]})
            pq.write_table(part, directory / f"part-{len(ranges):05d}.parquet")
            ranges.append(range(start, i + 1))
            start, size = i + 1, 0
    return ranges


def previous_features(batches, p, min_tokens, rev):  # noqa: ANN001, ANN201
    """``doc_features`` with the previous SHA-1 path, patched in the worker process for this task only."""

    from pipeline.dedup import hashes

    current = hashes._sha1_hashes_counts
    hashes._sha1_hashes_counts = baseline_function(rev, "pipeline/dedup/hashes.py", "_sha1_hashes_counts")
    try:
        yield from doc_features(batches, p, min_tokens)
    finally:
        hashes._sha1_hashes_counts = current


def task_times(spark, group: str) -> list[tuple[float, int]]:  # noqa: ANN001
    """(run seconds, input bytes) of every task of the job group's last stage, from Spark's status API."""
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    stages = sorted(s for j in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(j).stageIds)
    base = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages"
    out = []
    for stage in stages:
        with urllib.request.urlopen(f"{base}/{stage}/0/taskList?length=100000") as r:
            tasks = json.load(r)
        rows = [
            (t["taskMetrics"]["executorRunTime"] / 1e3, t["taskMetrics"]["inputMetrics"]["bytesRead"]) for t in tasks
        ]
        if len(rows) > len(out):  # the scan stage (the count's final stage has one task)
            out = rows
    return out


def main(argv: list[str] | None = None) -> None:
    os.environ["PYTHONPATH"] = child_env()["PYTHONPATH"]  # Spark's Python workers import bench.*
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=40.0, help="MB of small documents (default 40)")
    ap.add_argument("--big", default="2,2.5,3,4", help="sizes of the large documents in MB (default 2,2.5,3,4)")
    ap.add_argument("--file-mb", type=float, default=4.0, help="MB of text per Parquet file and task (default 4)")
    ap.add_argument(
        "--baseline-rev", default=BASELINE_REV, help=f"git revision of the previous path (default {BASELINE_REV})"
    )
    args = ap.parse_args(argv)
    previous_path(args.baseline_rev)  # a bad revision stops here, before Spark starts
    from pipeline.spark.session import build_session

    spark = build_session(
        "bench-stragglers",
        master="local[2]",
        settings={
            "spark.ui.enabled": "true",
            "spark.ui.port": "0",
            "spark.driver.memory": "3g",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    p, min_tokens = params()
    with tempfile.TemporaryDirectory() as tmp:
        texts = table(args.mb, [float(x) for x in args.big.split(",")])
        ranges = write(texts, Path(tmp), args.file_mb)
        big_ids = [i for i, t in enumerate(texts) if len(t) >= 1e6]
        big_files = [f for f, r in enumerate(ranges) if any(i in r for i in big_ids)]
        total = sum(len(t.encode("utf-8")) for t in texts) / 1e6
        print(
            f"{len(texts)} documents, {total:.1f} MB in {len(ranges)} files; large documents {big_ids} "
            f"in files {big_files}; local[2], load {os.getloadavg()[0]:.2f}"
        )
        largest = max(f.stat().st_size for f in Path(tmp).iterdir())
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(largest))
        spark.conf.set("spark.sql.files.openCostInBytes", str(largest))  # so each file is a task of its own
        docs = spark.read.parquet(tmp)
        fn = {"previous": functools.partial(previous_features, rev=args.baseline_rev), "new": doc_features}
        figures: dict[str, tuple[float, str]] = {}
        for run, name in enumerate(("new", "previous", "new", "previous", "new")):  # the first run warms up
            step, group = fn[name], f"{name}-{run}"
            spark.sparkContext.setJobGroup(group, group)
            features = docs.select("doc_id", "text").mapInArrow(
                per_task(lambda it, step=step: step(iter(it), p, min_tokens)),
                "doc_id long, ntokens long, h1 long, h2 long, keys array<long>",
            )
            features.agg({"keys": "count"}).collect()
            times = task_times(spark, group)
            if run == 0:
                continue
            secs = sorted(t for t, _ in times)
            heavy = max(times)
            print(
                f"  {name:<9} {len(times)} tasks: median {statistics.median(secs):5.2f} s, max {secs[-1]:5.2f} s "
                f"(x{secs[-1] / statistics.median(secs):4.1f}; its input {heavy[1] / 1e6:.1f} MB), "
                f"total {sum(secs):6.1f} task-s, load {os.getloadavg()[0]:.2f}"
            )
            figures[f"{name} {run} largest/median"] = (secs[-1] / statistics.median(secs), "x")
    spark.stop()
    write_result("dedup_stragglers", args, figures)


if __name__ == "__main__":
    main()
