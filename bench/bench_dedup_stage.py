"""The whole dedup stage on local[2]: MB/s over a >= 200 MB corpus and peak driver memory (issue: dedup).

Baseline in the same run: single-process signature throughput of the same kernel on a slice of the
corpus, so the ratio shows what Spark's plumbing costs. Run: python -m bench dedup_stage [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time

from bench.harness import DATA, ProcessTree, config_text, corpus, session, write_result
from pipeline.config import load_config_text
from pipeline.dedup import minhash_signatures
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext


def kernel_rate(raw, megabytes: float = 20) -> float:
    """MB/s of minhash_signatures (SHA-1, affine32, P=256) in this process on the corpus's first MBs."""
    texts, size = [], 0
    with open(raw, "rb") as f:
        for line in f:
            texts.append(json.loads(line)["text"])
            size += len(texts[-1].encode())
            if size > megabytes * 1e6:
                break
    minhash_signatures(texts[:10])  # compile / warm up
    started = time.process_time()
    for i in range(0, len(texts), 2000):
        minhash_signatures(texts[i : i + 2000])
    return size / 1e6 / (time.process_time() - started)


def verification_check(spark, out, sample: int = 1000) -> str:
    """Stored Jaccard of ``sample`` verified edges vs Python sets (``text_jaccard``) on their two texts."""
    from pyspark.sql import functions as F

    from pipeline.dedup import text_jaccard

    edges = spark.read.parquet(str(out / "dedup" / "edges")).orderBy(F.rand(seed=1)).limit(sample).toPandas()
    ids = [int(x) for x in set(edges.src) | set(edges.dst)]
    docs = spark.read.parquet(str(out / "documents")).where(F.col("doc_id").isin(ids)).select("doc_id", "text")
    text = dict(docs.toPandas().itertuples(index=False, name=None))
    differ = sum(
        text_jaccard(text[s], text[d], 5, "word", 100_000) != j for s, d, j in edges.itertuples(index=False, name=None)
    )
    return f"{differ} of {len(edges)} sampled verified edges differ from Python-set Jaccard"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=200)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    raw = corpus(args.mb)
    text_mb = sum(len(json.loads(line)["text"].encode()) for line in open(raw, "rb")) / 1e6
    out = DATA / "run-dedup"
    shutil.rmtree(out, ignore_errors=True)
    spark = session()
    ctx = RunContext(load_config_text(config_text(raw, out), args.overrides), spark=spark)
    run_stages(ctx, only="ingest", log=lambda *_: None)
    with ProcessTree() as peak:
        started = time.time()
        counts = run_stages(ctx, only="dedup", log=lambda *_: None)["dedup"].counts
        seconds = time.time() - started
    report = json.loads((out / "dedup" / "report.json").read_text())
    check = verification_check(spark, out)
    single = kernel_rate(raw)
    print(
        f"corpus: {text_mb:.0f} MB of text, {counts['documents']} documents; removed {counts['duplicates_removed']} "
        f"({counts['exact_duplicates_removed']} exact), candidate edges {counts['candidate_edges']}, "
        f"verified {counts['verified_edges']}"
    )
    print(f"dedup stage on local[2]: {seconds:.1f} s = {text_mb / seconds:.2f} MB/s (target >= 4)")
    print("seconds per step:", report["seconds"])
    print("verification:", check)
    print(f"peak driver memory: python {peak.peak['root'] / 2**20:.0f} MiB, JVM {peak.peak['jvm'] / 2**20:.0f} MiB")
    print(
        f"baseline, signatures in one process: {single:.1f} MB/s; stage (2 cores) / kernel (1 core): "
        f"{text_mb / seconds / single:.2f}"
    )
    figures = {"stage": (text_mb / seconds, "MB/s"), "stage seconds": (seconds, "s"), "kernel": (single, "MB/s")}
    peaks = {"peak python": (peak.peak["root"] / 2**20, "MiB"), "peak JVM": (peak.peak["jvm"] / 2**20, "MiB")}
    write_result("dedup_stage", args, {**figures, **peaks})
    spark.stop()


if __name__ == "__main__":
    main()
