"""The spans stage's Spark plan (docs/spans.md): exact substrings found by hashing every window of ``min_tokens``
tokens, grouping by hash, confirming each repeated hash on the window's bytes, then cutting the merged ranges
out of each document. Every step is a shuffle or a ``mapInArrow`` over one partition: memory per task."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from pipeline.config import PipelineConfig
from pipeline.spans.batches import (
    CANDIDATES,
    KIND_EXACT,
    REMOVED,
    REWRITE_COLUMNS,
    WINDOWS,
    anchor_batches,
    candidate_batches,
    merged_batches,
    rewrite_batches,
)
from pipeline.spans.report_section import report_section
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, SourceTally, Stage, source_tally

REMOVAL = "spans_emptied"  # the accounting's reason for a document the cuts left without a word


def exact_removals(docs, k: int, tokenizer: str):
    """Documents -> one row per removed window (doc_id, source, start, end, copies, kept_doc_id, kept_start):
    every window whose bytes occur more than once, but the first copy (lowest doc_id, then position). The
    windows compared on their bytes are those whose anchor's hash repeats (exact.window_anchors)."""
    anchors = docs.select("doc_id", "text").mapInArrow(
        per_task(lambda it: anchor_batches(it, k, tokenizer)), from_arrow_schema(WINDOWS)
    )
    by_hash = Window.partitionBy("hash")
    repeated = anchors.withColumn("n", F.count(F.lit(1)).over(by_hash)).where(F.col("n") >= 2)
    positions = repeated.groupBy("doc_id").agg(F.collect_list("pos").alias("positions"))
    candidates = (
        docs.select("doc_id", "source", "text")
        .join(positions, "doc_id")
        .mapInArrow(per_task(lambda it: candidate_batches(it, k, tokenizer)), from_arrow_schema(CANDIDATES))
    )
    by_bytes = Window.partitionBy("window")
    ordered = by_bytes.orderBy("doc_id", "start")
    confirmed = (
        candidates.withColumn("copies", F.count(F.lit(1)).over(by_bytes))
        .where(F.col("copies") >= 2)
        .withColumn("rank", F.row_number().over(ordered))
        .withColumn("kept", F.first(F.struct("doc_id", "start")).over(ordered))
    )
    return confirmed.where(F.col("rank") > 1).select(
        "doc_id",
        "source",
        "start",
        "end",
        "copies",
        F.col("kept.doc_id").alias("kept_doc_id"),
        F.col("kept.start").alias("kept_start"),
    )


def run_spans(ctx: RunContext, documents: str) -> dict[str, Any]:
    """The table ``documents`` -> ``spans/removed/``, ``spans/documents/`` and ``spans/emptied/``; counts per
    source."""
    part = ctx.config.spans.exact_substring if ctx.config.spans else None
    docs = ctx.read_table(documents)
    if part is not None:
        windows = exact_removals(docs, part.min_tokens, part.tokenizer)
        grouped = windows.groupBy("doc_id", "source").agg(
            F.collect_list(F.struct("start", "end", "copies", "kept_doc_id", "kept_start")).alias("windows")
        )
        removed = grouped.mapInArrow(per_task(merged_batches), from_arrow_schema(REMOVED))
    else:
        removed = ctx.spark.createDataFrame([], from_arrow_schema(REMOVED))
    ctx.write_table(removed, layout.SPANS_REMOVED)
    removed = ctx.read_table(layout.SPANS_REMOVED)
    ranges = removed.groupBy("doc_id").agg(F.collect_list(F.struct("start", "end")).alias("ranges"))
    joined = docs.join(ranges, "doc_id", "left").select(*docs.columns, "ranges")
    schema = to_arrow_schema(docs.schema)
    for column in REWRITE_COLUMNS:
        schema = schema.append(column)
    rows = joined.mapInArrow(per_task(lambda it: rewrite_batches(it, schema)), from_arrow_schema(schema))
    rows = rows.persist(StorageLevel.DISK_ONLY)  # the cuts are made once; the text never sits in memory
    ctx.write_table(rows.where(~F.col("emptied")).select(*docs.columns), layout.SPANS_DOCUMENTS)
    ctx.write_table(rows.where(F.col("emptied")).select("doc_id", "source", "removed_bytes"), layout.SPANS_EMPTIED)
    figures = rows.groupBy("source").agg(
        F.count(F.lit(1)).alias("read"),
        F.sum(F.col("emptied").cast("long")).alias("emptied"),
        F.sum((F.col("removed_bytes") > 0).cast("long")).alias("changed"),
        F.sum("removed_bytes").alias("removed_bytes"),
    )
    found = {r["source"]: r for r in figures.collect()}
    rows.unpersist()
    by_kind = {r["source"]: r["n"] for r in removed.groupBy("source").agg(F.count(F.lit(1)).alias("n")).collect()}
    sources = {}
    for source in ctx.config.sources:
        row = found.get(source.name)
        read, emptied = (row["read"], row["emptied"]) if row else (0, 0)
        sources[source.name] = {
            "read": read,
            "documents": read - emptied,
            REMOVAL: emptied,
            "changed": row["changed"] if row else 0,
            "removed_bytes": {KIND_EXACT: row["removed_bytes"] if row else 0},
            "removed_ranges": {KIND_EXACT: by_kind.get(source.name, 0)},
        }
    return {"sources": sources}


class Spans(Stage):
    """The survivors -> the same documents with repeated spans cut out (passed on), what was removed."""

    name = "spans"
    config_keys = ("spans",)
    reads = ("documents",)
    passes = {"documents": layout.SPANS_DOCUMENTS}
    writes = (layout.SPANS,)
    passes_on = "after_spans"
    stop_when_empty = True

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return run_spans(ctx, inputs["documents"].table)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        return {"spans": asdict(config.spans) if config.spans else None}

    def applies(self, config: PipelineConfig) -> bool:
        return config.spans is not None

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        return source_tally(counts, "documents", read="read", removals=(REMOVAL,))

    def report(self, run: str, counts: dict[str, Any]) -> dict[str, Any] | None:
        return report_section(run, counts)


STAGE = Spans()
