"""The spans stage's Spark plan (docs/spans.md): repeated lines (CCNet) and runs of sentences (datatrove's
SentenceDedup) dropped, then exact substrings found by hashing every window of ``min_tokens`` tokens, grouping by
hash, confirming each repeated hash on the window's bytes, then cutting the merged ranges out of each document.
Every step is a shuffle or a ``mapInArrow`` over one partition: memory per task."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from pipeline.config import PipelineConfig
from pipeline.config.schema import LinesConfig, SentencesConfig
from pipeline.spans.batches import (
    CONFIRMED,
    KIND_EXACT,
    PACKED,
    REMOVED,
    REMOVED_FIELDS,
    REWRITE_COLUMNS,
    decide_batches,
    merged_runs,
    packed,
    packed_anchor_batches,
    packed_rewrite_batches,
    unpacked_anchors,
)
from pipeline.spans.lines import KIND_LINES, LINES, line_hash, line_rewrite_batches, line_rows
from pipeline.spans.report_html import report_html
from pipeline.spans.report_section import report_section
from pipeline.spans.sentence_batches import SENTENCE_COLUMNS, SIGNATURES, sentence_rewrite_batches, signature_batches
from pipeline.spans.sentences import KIND_SENTENCES
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, SourceTally, Stage, source_tally
from pipeline.storage.parquet_footers import table_footers

log = logging.getLogger(__name__)

REMOVAL = "spans_emptied"  # the accounting's reason for a document the cuts left without a word
TOO_SHORT = "spans_too_short"  # ... for a document the sentence part left too short (datatrove's rule)
PARTS_PER_PARTITION = 16  # anchor parts per shuffle partition: parts hash to partitions, many even out the load
PARTITIONS_KEY = "spark.sql.shuffle.partitions"
TASK_ANCHOR_BYTES = 256 * 2**20  # the anchor rows one partition is planned to hold at most (docs/spans.md)
ANCHOR_ROW_BYTES = 40  # an anchor row's bytes besides its context: two int64, five int32 (36), rounded up


def anchor_bytes_per_byte(k: int) -> float:
    """The anchor rows' bytes per byte of text at ``k`` tokens, from the minimizers' density
    (docs/spans.md, Exact substrings): 2 / (w + 1) anchors per token, w = k - m + 1, each with (windows picking
    it) + k - 1 tokens of context and ANCHOR_ROW_BYTES of its own. Counting one byte per token makes it an upper
    bound for words."""
    rate = 2 / (k - max(k // 2, 1) + 2)
    return 1 + (k - 1) * rate + ANCHOR_ROW_BYTES * rate


def shuffle_partitions(data_bytes: int, k: int, session: int) -> int:
    """The exact-substring part's shuffle partitions for an input of ``data_bytes`` (its uncompressed Parquet
    data) at ``k`` tokens: enough that each holds about TASK_ANCHOR_BYTES of anchor rows at most, and never fewer
    than the session's ``spark.sql.shuffle.partitions`` (``session``)."""
    needed = math.ceil(max(data_bytes, 0) * anchor_bytes_per_byte(k) / TASK_ANCHOR_BYTES)
    return max(session, needed)


def table_data_bytes(ctx: RunContext, table: str) -> int:
    """The uncompressed bytes of the run's Parquet table ``table``, summed from the footers of the files Spark
    reads there (:mod:`pipeline.storage.parquet_footers`)."""
    footers = table_footers(ctx.table(table))
    return sum(meta.row_group(i).total_byte_size for _, meta in footers for i in range(meta.num_row_groups))


def exact_partitions(ctx: RunContext, table: str, k: int) -> int:
    """:func:`shuffle_partitions` for the exact-substring part reading the run's table ``table``."""
    return shuffle_partitions(table_data_bytes(ctx, table), k, int(ctx.spark.conf.get(PARTITIONS_KEY)))


def exact_removals(docs, k: int, tokenizer: str, parts: int, partitions: int):
    """Documents -> the runs of removed windows (CONFIRMED: doc_id, start, end, copies, kept_doc_id, kept_start)
    packed by doc_id into ``parts`` parts (batches.packed: one row per part and task): windows whose bytes occur
    earlier in the corpus (lowest doc_id, then position, is the kept copy). Every document gives one row per
    distinct anchor with the bytes of the windows picking it (batches.anchor_batches), packed by anchor hash;
    the packed rows are shuffled by part (one shuffle of a few large rows), each partition's rows unpacked and
    sorted by hash, doc_id and position, and each group's windows compared on their bytes
    (batches.decide_batches), on ``partitions`` partitions; each document's runs of one partition merged there
    (batches.merged_runs), so fewer rows go on to the rewrite."""
    anchors = docs.select("doc_id", "text").mapInArrow(
        per_task(lambda it: packed_anchor_batches(it, k, tokenizer, parts)), from_arrow_schema(PACKED)
    )
    return anchors.repartition(partitions, "part").mapInArrow(
        per_task(
            lambda it: packed(
                merged_runs(decide_batches(unpacked_anchors(it), k, tokenizer)), "doc_id", parts, CONFIRMED
            )
        ),
        from_arrow_schema(PACKED),
    )


def exact_pass(docs, k: int, tokenizer: str, partitions: int | None = None):
    """Documents -> the documents' columns with the exact-substring cuts (batches.exact_rewrite_batches). The
    packed runs and the documents, each keyed by its doc_id's part, are shuffled together (one shuffle), the
    runs sorted first in each partition (batches.packed_rewrite_batches): no row per run is shuffled. Both
    shuffles have ``partitions`` partitions (default: the session's ``spark.sql.shuffle.partitions``)."""
    if partitions is None:
        partitions = int(docs.sparkSession.conf.get(PARTITIONS_KEY))
    parts = PARTS_PER_PARTITION * partitions
    part, runs = "_spans_part", "_spans_runs"
    blobs = exact_removals(docs, k, tokenizer, parts, partitions).select(
        *(F.lit(None).cast(field.dataType).alias(field.name) for field in docs.schema.fields),
        F.col("part").alias(part),
        F.col("packed").alias(runs),
    )
    keyed = docs.select(
        *docs.columns, F.pmod("doc_id", F.lit(parts)).alias(part), F.lit(None).cast("binary").alias(runs)
    )
    combined = keyed.unionByName(blobs).repartition(partitions, part).sortWithinPartitions(F.col(runs).isNull())
    schema = to_arrow_schema(docs.schema)
    for column in REWRITE_COLUMNS:
        schema = schema.append(column)
    return combined.mapInArrow(
        per_task(lambda it: packed_rewrite_batches(it, schema, part, runs)), from_arrow_schema(schema)
    )


def later_copies(
    frame: Any, key: str | tuple[str, ...], order: tuple[str, ...], kept: tuple[str, ...], at_least: int = 2
) -> Any:
    """The rows of ``frame`` whose ``key`` (a column or several) occurs at least ``at_least`` times, less the first
    of each key by ``order``: with ``copies`` (the key's occurrences) and ``kept`` (a struct of the first row's
    ``kept`` columns)."""
    by_key = Window.partitionBy(*((key,) if isinstance(key, str) else key))
    ordered = by_key.orderBy(*order)
    return (
        frame.withColumn("copies", F.count(F.lit(1)).over(by_key))
        .where(F.col("copies") >= at_least)
        .withColumn("rank", F.row_number().over(ordered))
        .withColumn("kept", F.first(F.struct(*kept)).over(ordered))
        .where(F.col("rank") > 1)
    )


def sentence_pass(docs, part: SentencesConfig):
    """Documents -> the documents' columns with datatrove's SentenceDedup rewrite (sentence_batches): every
    signature after the first of its hash (lowest doc_id, then sentence index) is a duplicate."""
    signed = docs.select("doc_id", "text").mapInArrow(
        per_task(lambda it: signature_batches(it, part.span)), from_arrow_schema(SIGNATURES)
    )
    dups = (
        later_copies(signed, "hash", ("doc_id", "sent"), ("doc_id", "start"))
        .groupBy("doc_id")
        .agg(
            F.collect_list(
                F.struct(
                    "sent", "copies", F.col("kept.doc_id").alias("kept_doc_id"), F.col("kept.start").alias("kept_start")
                )
            ).alias("dups")
        )
    )
    joined = docs.join(dups, "doc_id", "left").select(*docs.columns, "dups")
    schema = to_arrow_schema(docs.schema)
    for column in SENTENCE_COLUMNS:
        schema = schema.append(column)
    span, words, sentences = part.span, part.min_doc_words, part.min_num_sentences
    return joined.mapInArrow(
        per_task(lambda it: sentence_rewrite_batches(it, schema, span, words, sentences)), from_arrow_schema(schema)
    )


def line_pass(docs, part: LinesConfig, hash_of: Callable[[bytes], int] = line_hash):
    """Documents -> the documents' columns with CCNet's line dedup (lines.line_rewrite_batches): every line after
    the first copy (lowest doc_id, then line index) of a normalized line occurring at least ``min_repeats``
    times is dropped. Lines are partitioned by the 64-bit hash of their normalized bytes and grouped by hash and
    bytes (the window needs no second shuffle): a hash collision puts two lines in one partition, never in one
    group, so it removes nothing."""
    rows = docs.select("doc_id", "text").mapInArrow(
        per_task(lambda it: line_rows(it, hash_of)), from_arrow_schema(LINES)
    )
    by_hash = rows.repartition("hash")
    dups = (
        later_copies(by_hash, ("hash", "norm"), ("doc_id", "line"), ("doc_id", "start"), part.min_repeats)
        .groupBy("doc_id")
        .agg(
            F.collect_list(
                F.struct(
                    "line", "copies", F.col("kept.doc_id").alias("kept_doc_id"), F.col("kept.start").alias("kept_start")
                )
            ).alias("dups")
        )
    )
    joined = docs.join(dups, "doc_id", "left").select(*docs.columns, "dups")
    schema = to_arrow_schema(docs.schema)
    for column in SENTENCE_COLUMNS:
        schema = schema.append(column)
    return joined.mapInArrow(per_task(lambda it: line_rewrite_batches(it, schema)), from_arrow_schema(schema))


def _removed_rows(rows: Any, kind: str) -> Any:
    """A part's rows (with ``runs``) -> its rows of ``spans/removed/``, one per run."""
    run = F.explode("runs").alias("run")
    fields = [f"run.{name}" for name in REMOVED_FIELDS]
    return rows.select("doc_id", "source", run).select(
        "doc_id", "source", *fields[:2], F.lit(kind).alias("kind"), *fields[2:]
    )


def _by_source(rows, flag: str, removed: str, changed: Any = None) -> dict[str, Any]:
    """Per source: documents read, flagged (emptied or too short), bytes removed, the ranges of ``runs`` (each a
    row of ``spans/removed/``; 0 without that column), and documents ``changed`` (a condition) when given."""
    ranges = F.when(F.col("runs").isNull(), 0).otherwise(F.size("runs")) if "runs" in rows.columns else F.lit(0)
    figures = rows.groupBy("source").agg(
        F.count(F.lit(1)).alias("read"),
        F.sum(F.col(flag).cast("long")).alias("flagged"),
        F.sum(removed).alias("removed_bytes"),
        F.sum(ranges).alias("ranges"),
        *([F.sum(changed.cast("long")).alias("changed")] if changed is not None else []),
    )
    return {r["source"]: r.asDict() for r in figures.collect()}


def run_spans(ctx: RunContext, documents: str) -> dict[str, Any]:
    """The table ``documents`` -> ``spans/removed/``, ``spans/documents/``, ``spans/emptied/`` (and
    ``spans/too_short/`` with lines or sentences on); counts per source. The parts run in the order lines,
    sentences, exact substrings, each on what the one before passed on (docs/spans.md, Files)."""
    spans = ctx.config.spans
    exact = spans.exact_substring if spans else None
    passes: list[tuple[str, Any, Callable[..., Any], str]] = [
        (KIND_LINES, spans.lines if spans else None, line_pass, layout.SPANS_AFTER_LINES),
        (KIND_SENTENCES, spans.sentences if spans else None, sentence_pass, layout.SPANS_AFTER_SENTENCES),
    ]
    on = [(kind, part, apply, table) for kind, part, apply, table in passes if part is not None]
    docs = ctx.read_table(documents)
    exact_input = documents  # the table the exact-substring part reads
    columns = docs.columns
    removed_parts = []
    pass_figures: dict[str, dict[str, Any]] = {}
    persisted = []
    too_short_parts = []
    for i, (kind, part, apply, after_table) in enumerate(on):
        part_rows = apply(docs, part).persist(StorageLevel.DISK_ONLY)
        persisted.append(part_rows)
        too_short_parts.append(part_rows.where(F.col("too_short")).select("doc_id", "source", "removed_bytes"))
        removed_parts.append(_removed_rows(part_rows, kind))
        pass_figures[kind] = _by_source(part_rows, "too_short", "removed_bytes")
        earlier = F.col("sentence_bytes") if "sentence_bytes" in part_rows.columns else F.lit(0).cast("long")
        passed = part_rows.where(~F.col("too_short")).select(
            *columns, (earlier + F.col("removed_bytes")).alias("sentence_bytes")
        )
        if exact is not None or i + 1 < len(on):  # a later part reads it: written once, offsets refer to it
            ctx.write_table(passed, after_table)
            docs, exact_input = ctx.read_table(after_table), after_table
        else:
            docs = passed
    if too_short_parts:
        too_short = too_short_parts[0]
        for part_too_short in too_short_parts[1:]:
            too_short = too_short.unionByName(part_too_short)
        ctx.write_table(too_short, layout.SPANS_TOO_SHORT)
    if not on:
        docs = docs.withColumn("sentence_bytes", F.lit(0).cast("long"))
    if exact is not None:  # the runs of each document and its text meet in one shuffle, cut in one step
        partitions = exact_partitions(ctx, exact_input, exact.min_tokens)
        log.info("spans: exact substrings on %d shuffle partitions", partitions)
        rows = exact_pass(docs, exact.min_tokens, exact.tokenizer, partitions)
    else:
        rows = docs.withColumn("removed_bytes", F.lit(0).cast("long")).withColumn("emptied", F.lit(False))
    rows = rows.persist(StorageLevel.DISK_ONLY)  # the cuts are made once; the text never sits in memory
    if exact is not None:
        removed_parts.append(_removed_rows(rows, KIND_EXACT))
    removed = ctx.spark.createDataFrame([], from_arrow_schema(REMOVED))
    for part in removed_parts:
        removed = removed.unionByName(part)
    ctx.write_table(removed, layout.SPANS_REMOVED)
    ctx.write_table(rows.where(~F.col("emptied")).select(*columns), layout.SPANS_DOCUMENTS)
    ctx.write_table(rows.where(F.col("emptied")).select("doc_id", "source", "removed_bytes"), layout.SPANS_EMPTIED)
    changed = (F.col("removed_bytes") + F.col("sentence_bytes")) > 0
    found = _by_source(rows, "emptied", "removed_bytes", changed)
    rows.unpersist()
    for part_rows in persisted:
        part_rows.unpersist()
    by_kind = {  # the rows of spans/removed/ per source and kind, counted where they came from
        (source, kind): figures["ranges"] or 0
        for kind, by in (*pass_figures.items(), (KIND_EXACT, found))
        for source, figures in by.items()
    }
    kinds = [kind for kind, *_ in on] + ([KIND_EXACT] if exact is not None else [])
    first = pass_figures[on[0][0]] if on else found
    sources = {}
    for source in ctx.config.sources:
        row = found.get(source.name, {})
        read = first.get(source.name, {}).get("read", 0)
        emptied = row.get("flagged", 0)
        too_short = sum(figures.get(source.name, {}).get("flagged", 0) or 0 for figures in pass_figures.values())
        figures: dict[str, Any] = {"read": read, "documents": read - emptied - too_short, REMOVAL: emptied}
        if on:
            figures[TOO_SHORT] = too_short
        bytes_by_kind = {kind: by.get(source.name, {}).get("removed_bytes", 0) for kind, by in pass_figures.items()}
        bytes_by_kind[KIND_EXACT] = row.get("removed_bytes", 0)
        figures["changed"] = row.get("changed", 0)
        figures["removed_bytes"] = {kind: bytes_by_kind[kind] or 0 for kind in kinds}
        figures["removed_ranges"] = {kind: by_kind.get((source.name, kind), 0) for kind in kinds}
        sources[source.name] = figures
    return {"sources": sources}


class Spans(Stage):
    """The survivors -> the same documents with repeated spans cut out (passed on), what was removed."""

    name = "spans"
    config_keys = ("spans",)
    reads = ("documents",)
    passes = {"documents": layout.SPANS_DOCUMENTS}
    writes = (layout.SPANS,)
    removal_tables = {REMOVAL: layout.SPANS_EMPTIED, TOO_SHORT: layout.SPANS_TOO_SHORT}
    passes_on = "after_spans"
    report_keys = ("spans",)
    report_before = "tokens"  # what the stage cut from the survivors, after what ingest rejected
    stop_when_empty = True

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return run_spans(ctx, inputs["documents"].table)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        return {"spans": asdict(config.spans) if config.spans else None}

    def applies(self, config: PipelineConfig) -> bool:
        return config.spans is not None

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        return source_tally(counts, "documents", read="read", removals=(REMOVAL, TOO_SHORT))

    def report(self, run: str, counts: dict[str, Any]) -> dict[str, Any] | None:
        return report_section(run, counts)

    def report_html(self, data: dict[str, Any]) -> list[str]:
        return report_html(data)


STAGE = Spans()
