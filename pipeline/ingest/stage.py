"""Spark ingest stage: splits -> Arrow batches of records -> ``documents/`` and ``rejects/``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import pyarrow as pa
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline.config import PipelineConfig
from pipeline.errors import PipelineError
from pipeline.sources.batches import RECORD_SCHEMA, records_to_batches
from pipeline.sources.records import RecordRules
from pipeline.sources.splits import Split, plan_splits, source_files
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Stage, source_tally

SPLIT_SCHEMA = "source string, format string, url string, rel_path string, start long, end long, compression string"
DOCUMENT_COLUMNS = ["doc_id", "source", "file", "position", "text", "meta"]
REJECT_COLUMNS = ["source", "file", "position", "reason", "detail", "excerpt"]


def run_ingest(ctx: RunContext) -> dict:
    """Read every source, write ``documents/`` and ``rejects/``, return counts per source and reason."""
    config = ctx.config
    splits = plan_splits(config, source_files(config))
    rules = {
        s.name: RecordRules(
            s.text_field, tuple(s.keep_fields), config.ingest.max_text_bytes, config.ingest.excerpt_chars
        )
        for s in config.sources
    }
    units = {s.name: s.text_unit for s in config.sources}
    spark = ctx.spark
    with_rejects = spark.sparkContext.accumulator(frozenset(), _SplitSet())

    def note(split: Split) -> None:
        with_rejects.add(frozenset((split,)))

    records = read_records(spark, splits, rules, units, "documents", note)
    records.select(*DOCUMENT_COLUMNS).write.mode("overwrite").parquet(ctx.table(layout.DOCUMENTS))
    # the rejects pass re-reads only the splits where the documents pass met a reject
    again = [s for s in splits if s in with_rejects.value]
    records = read_records(spark, again, rules, units, "rejects")
    records.select(*REJECT_COLUMNS).write.mode("overwrite").parquet(ctx.table(layout.REJECTS))
    tallies: list[tuple[str, str | None, int]] = [
        *documents_per_source(spark.read.parquet(ctx.table(layout.DOCUMENTS)))
    ]
    for row in spark.read.parquet(ctx.table(layout.REJECTS)).groupBy("source", "reason").count().collect():
        tallies.append((row["source"], row["reason"], row["count"]))
    return {
        "sources": _count(tallies, [s.name for s in config.sources]),
        "splits": len(splits),
        "splits_with_rejects": len(again),
    }


class _SplitSet(AccumulatorParam):
    """Accumulates the set of splits in which a pass met a reject (a retried task only adds again)."""

    def zero(self, value: frozenset) -> frozenset:
        return frozenset()

    def addInPlace(self, value1: frozenset, value2: frozenset) -> frozenset:  # noqa: N802 - pyspark's name
        return value1 | value2


def read_records(
    spark,
    splits: list[Split],
    rules: dict[str, RecordRules],
    units: dict[str, str],
    want: str,
    on_reject: Callable[[Split], None] | None = None,
) -> DataFrame:
    """The records (``RECORD_SCHEMA``) of ``splits``, one task per split; ``want`` and ``on_reject``
    as in :func:`records_to_batches`."""
    return split_frame(spark, splits).mapInArrow(
        per_task(lambda it: records_to_batches(iter(it), rules, units, want, on_reject)), spark_schema(RECORD_SCHEMA)
    )


def split_frame(spark, splits: list[Split]) -> DataFrame:
    """A DataFrame of ``splits``, exactly one per partition (none for no splits).

    ``repartition(n)`` of n rows deals them round-robin from a random offset per input partition,
    which left some tasks two splits and others none (1 GB in 16 splits: 4 tasks read 128 MB, 4 read
    nothing), so a cluster waited on the doubled tasks."""
    rows = spark.sparkContext.parallelize([s.as_row() for s in splits], max(1, len(splits)))
    return spark.createDataFrame(rows, SPLIT_SCHEMA)


class DocIdCollisionError(PipelineError, RuntimeError):
    """Two records hashed to the same 64-bit doc_id (about 2.7% likely at 10^9 documents)."""


def documents_per_source(docs: DataFrame) -> list[tuple[str, None, int]]:
    """(source, None, documents) per source, from one job that also finds any doc_id held by several rows
    (then :class:`DocIdCollisionError` names them)."""
    per_id = docs.groupBy("doc_id").agg(F.count("*").alias("n"), F.min("source").alias("source"))
    per_source = per_id.groupBy("source").agg(F.sum("n").alias("count"), F.max("n").alias("most")).collect()
    if any(row["most"] > 1 for row in per_source):
        _check_unique_ids(docs)
    return [(row["source"], None, row["count"]) for row in per_source]


def _check_unique_ids(docs) -> None:
    """Fail loudly, naming the records, if any doc_id repeats: joins would silently duplicate rows."""
    repeated = docs.groupBy("doc_id").count().where("count > 1")
    clashes = repeated.join(docs.select("doc_id", "source", "file", "position"), "doc_id").limit(10).collect()
    if clashes:
        where = "; ".join(f"{r['doc_id']}: {r['source']}/{r['file']}@{r['position']}" for r in clashes)
        raise DocIdCollisionError(
            f"doc_id collision between distinct records ({where}); rename a source or file to change their ids"
        )


def _count(tallies: list[tuple[str, str | None, int]], names: list[str]) -> dict:
    """documents_read = documents + rejected per source, with rejects broken down by reason, from
    (source, reject reason or None for documents, count) rows."""
    per_source: dict[str, dict[str, Any]] = {
        name: {"documents_read": 0, "rejected": 0, "documents": 0, "rejects_by_reason": {}} for name in names
    }
    for source, reason, count in tallies:
        entry = per_source[source]
        entry["documents_read"] += count
        if reason is None:
            entry["documents"] += count
        else:
            entry["rejected"] += count
            entry["rejects_by_reason"][reason] = count
    return per_source


def spark_schema(schema: pa.Schema):
    """The Spark struct type of an Arrow schema of int64 and string columns (``mapInArrow``'s output type)."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    mapping = {pa.int64(): LongType(), pa.string(): StringType()}
    return StructType([StructField(f.name, mapping[f.type], True) for f in schema])


SOURCE_FIELDS = ("name", "paths", "format", "text_field", "keep_fields", "text_unit")


def _inputs(cfg: PipelineConfig) -> dict:
    return {"sources": [{k: getattr(s, k) for k in SOURCE_FIELDS} for s in cfg.sources], "ingest": asdict(cfg.ingest)}


STAGE = Stage(
    "ingest",
    (*(f"sources[].{k}" for k in SOURCE_FIELDS), "ingest"),
    _inputs,
    run_ingest,
    outputs=(layout.DOCUMENTS, layout.REJECTS),
    tally=source_tally("documents", read="documents_read", rejected="rejected"),
    stop_when_empty=True,
)
