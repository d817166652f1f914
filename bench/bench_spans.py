"""Exact-substring spans (docs/spans.md, Exact substrings): MB/s per core of the stage's Spark plan, with the
suffix-array oracle's time beside it on the same documents, and the two results compared.

Run: ``python -m bench spans [--mb 50] [--k 50] [--master local[2]] [--no-oracle] [--corpus FILE.jsonl]``.

How it measures: docs/benchmarks.md, Method notes, spans.
"""

from __future__ import annotations

import itertools
import json
import os
import resource
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.harness import REPO, ProcessTree, arguments, write_result
from corpora.synthetic import take
from pipeline.config import load_config_text
from pipeline.spans.stage import run_spans
from pipeline.spark.session import build_session
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.spans_oracle import DOC_ROOTS, oracle_ranges


def documents(megabytes: float, corpus: Path | None = None) -> list[tuple[int, str]]:
    """(doc_id, text) of about ``megabytes`` MB: the first documents of the JSON-lines ``corpus`` (its ``text``
    field, one document a line), else the documentation sources cycled, each round a new doc_id."""
    if corpus is None:
        root = next(r for r in DOC_ROOTS if r.is_dir())
        files = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*.txt"))]

        def later(i: int, text: str) -> str:  # a later round: the same file with its own words, partly repeated
            return f"round {i // len(files)} of {i}\n" + text[(i * 131) % max(len(text) // 2, 1) :]

        texts = (files[i] if i < len(files) else later(i, files[i % len(files)]) for i in itertools.count())
    else:
        texts = (json.loads(line)["text"] for line in corpus.open(encoding="utf-8"))
    kept = take(texts, megabytes * 1e6, lambda text: len(text.encode("utf-8")))
    return [((i * 2654435761) % (2**62), text) for i, text in enumerate(kept)]


def main() -> None:
    args = arguments(
        __doc__, mb=50.0, k=50, master="local[2]", no_oracle=False, corpus=None, batch_rows=0
    ).parse_args()  # batch_rows: spark.sql.execution.arrow.maxRecordsPerBatch (0: Spark's 10,000)
    docs = documents(args.mb, args.corpus)
    size = sum(len(t.encode("utf-8")) for _, t in docs) / 1e6
    cores = int(args.master.split("[")[1].rstrip("]")) if "[" in args.master else 1
    with tempfile.TemporaryDirectory() as tmp:
        conf = (REPO / "conf" / "local.yaml").read_text()
        config = load_config_text(conf, [f"output={tmp}/run", f"spans.exact_substring.min_tokens={args.k}"])
        # with conf/local.yaml's speed-ups, as a local run has them (zip_rescans: no zip re-read per task)
        settings = {"spark.sql.shuffle.partitions": str(4 * cores)}
        if args.batch_rows:
            settings["spark.sql.execution.arrow.maxRecordsPerBatch"] = str(args.batch_rows)
        spark = build_session("bench-spans", args.master, settings, config.spark.speedups)
        ctx = RunContext(config, spark=spark)
        # through a Parquet file, not createDataFrame: at 1 GB the driver's JVM would hold every row in its heap
        given = Path(tmp) / "given.parquet"
        pq.write_table(
            pa.table(
                {"doc_id": [d for d, _ in docs], "source": ["web"] * len(docs), "text": [t for _, t in docs]},
                schema=pa.schema([("doc_id", pa.int64()), ("source", pa.string()), ("text", pa.string())]),
            ),
            given,
            row_group_size=2_000,
        )
        ctx.write_table(spark.read.parquet(str(given)).repartition(4 * cores), layout.SURVIVORS)
        # one sample a second: at psutil's 50 ms the sampling thread alone cost about 0.6 CPU s per 10 s under
        # load, counted in the driver as the stage's; the Python workers and the JVM outlive the stage and are
        # sampled once more at its end, so nothing of theirs is missed
        tree = ProcessTree(interval=1.0)
        tree.sample()
        cpu_before, cpu_jvm_before, load = tree.cpu(), tree.cpu(jvm=True), os.getloadavg()[0]
        start = time.perf_counter()
        with tree:
            counts = run_spans(ctx, layout.SURVIVORS)
        seconds = time.perf_counter() - start
        tree.sample()
        cpu_stage, cpu_jvm = tree.cpu() - cpu_before, tree.cpu(jvm=True) - cpu_jvm_before
        removed = pq.read_table(Path(tmp) / "run" / layout.SPANS_REMOVED).to_pylist()
        spark.stop()
    cut = sum(r["removed_bytes"]["exact_substring"] for r in counts["sources"].values())
    print(f"corpus {size:.1f} MB, {len(docs)} documents, k={args.k} bytes; {cut / 1e6:.1f} MB removed")
    print(f"spans stage: {seconds:.1f} s on {cores} cores = {size / seconds / cores:.2f} MB/s per core (wall)")
    split = f"JVM {cpu_jvm:.1f}, Python {cpu_stage - cpu_jvm:.1f}"
    print(f"spans stage: {cpu_stage:.1f} CPU s ({split}) = {size / cpu_stage:.2f} MB/s per core")
    print(f"load average at start {load:.1f}, at end {os.getloadavg()[0]:.1f}")
    figures = {"stage": (seconds, "s"), "per core": (size / cpu_stage, "MB/s"), "removed": (cut / 1e6, "MB")}
    if args.no_oracle:
        write_result("spans", args, figures)
        return
    before = resource.getrusage(resource.RUSAGE_SELF)
    expected = oracle_ranges(docs, args.k)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    found: dict[int, list[tuple[int, int]]] = {}
    for row in removed:
        found.setdefault(row["doc_id"], []).append((row["start"], row["end"]))
    same = {d: sorted(r) for d, r in found.items()} == expected
    print(f"suffix-array oracle: {cpu:.1f} CPU s = {size / cpu:.2f} MB/s, peak RSS {after.ru_maxrss / 1e6:.2f} GB")
    print(f"ranges equal the oracle's: {same}")
    write_result("spans", args, {**figures, "oracle": (cpu, "CPU s"), "equal the oracle": (float(same), "bool")})


if __name__ == "__main__":
    main()
