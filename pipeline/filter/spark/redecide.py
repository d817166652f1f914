"""Re-deciding the filter stage from ``filter/signals/`` (docs/stages.md, Re-deciding from the signals): the earlier
decision's tables moved to ``filter/_previous/``, a ``mapInArrow`` over the signal columns decides every document
it can, the filters run again over the text of the others only, and the kept documents are the earlier kept rows
(text as the filters left it) plus the recomputed ones."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from pipeline import storage
from pipeline.filter.batches import DROPPED_COLUMNS, EXCERPT, LANGUAGE, Summary
from pipeline.filter.plan import Plan
from pipeline.filter.redecide import OLD_REASON, redecide_partition, redecide_schema
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext

PREVIOUS = "filter/_previous"  # the earlier decision's tables while a new one is written from them
MOVED = (layout.FILTERED, layout.FILTER_DROPPED, layout.FILTER_SIGNALS, layout.FILTER_SIGNALS_META)


def previous_meta(ctx: RunContext) -> dict[str, Any] | None:
    """The signals' record of the earlier decision: under ``filter/_previous/`` when a re-decision stopped midway
    (the tables there are the whole earlier ones), else ``filter/signals.json`` when its tables are all there."""
    for base in (PREVIOUS, layout.FILTER):
        meta = ctx.path(*layout.parts(_at(base, layout.FILTER_SIGNALS_META)))
        tables = [ctx.path(*layout.parts(_at(base, t))) for t in MOVED[:3]]
        if storage.exists(meta) and all(storage.exists(t) for t in tables):
            return {**storage.read_json(meta), "_base": base}
    return None


def _at(base: str, name: str) -> str:
    """``name`` (a table under ``filter/``) under ``base``."""
    return name if base == layout.FILTER else f"{base}/{name.split('/', 1)[1]}"


def redecide(ctx: RunContext, documents: str, plan: Plan, base: str, measure: Callable[[Any], Any]) -> dict[str, Any]:
    """Write the filter stage's tables from the earlier ones under ``base`` and the new ``plan``; ``measure`` runs the
    filters over a frame of documents (the normal pass: its rows persisted). Returns the merged summary."""
    if base == layout.FILTER:  # move the earlier tables aside: Spark cannot replace a table it reads
        storage.remove(ctx.path(*layout.parts(PREVIOUS)))
        storage.commit([(ctx.path(*layout.parts(t)), ctx.path(*layout.parts(_at(PREVIOUS, t)))) for t in MOVED])
    old_kept = ctx.read_table(_at(PREVIOUS, layout.FILTERED))
    old_dropped = ctx.read_table(_at(PREVIOUS, layout.FILTER_DROPPED))
    old_signals = ctx.read_table(_at(PREVIOUS, layout.FILTER_SIGNALS))
    docs = ctx.read_table(documents)
    present = [c for c in plan.signals.names if c in old_signals.columns]
    # mapInArrow names its input columns unquoted: a dotted name goes in as s<i> and is renamed back in the task
    wanted = [F.col(f"`{c}`").alias(f"s{i}") for i, c in enumerate(present)]
    reasons = old_dropped.select("doc_id", F.col("reason").alias(OLD_REASON))
    signals = old_signals.select("doc_id", "source", *wanted).join(reasons, "doc_id", "left")
    schema = redecide_schema(plan)
    decided = signals.mapInArrow(
        per_task(lambda it: redecide_partition(_renamed(it, present), plan, schema)), from_arrow_schema(schema)
    )
    decided = decided.persist(StorageLevel.DISK_ONLY)
    stepless = [name for name in {s.name for s in ctx.config.sources} if not plan.steps.get(name)]
    again = decided.where(F.col("kind") == "recompute").select("doc_id")
    again = again.unionByName(docs.where(F.col("source").isin(stepless)).select("doc_id"))
    rows = measure(docs.join(again, "doc_id", "left_semi"))  # kind kept / dropped / signals / summary, persisted
    kept_ids = decided.where(F.col("kind") == "kept").select("doc_id")
    columns = [c for c in docs.columns if c not in LANGUAGE.names] + LANGUAGE.names
    kept = old_kept.join(kept_ids, "doc_id", "left_semi").select(*columns)
    kept = kept.unionByName(rows.where(F.col("kind") == "kept").select(*columns))
    ctx.write_table(kept, layout.FILTERED)
    drops = decided.where(F.col("kind") == "dropped")
    excerpts = old_dropped.select("doc_id", F.col("excerpt").alias("_old_excerpt"))
    texts = docs.select("doc_id", F.substring("text", 1, EXCERPT).alias("_text_excerpt"))
    from_text = drops.where(F.col("excerpt_from") == "text").select("doc_id")
    drops = drops.join(excerpts, "doc_id", "left").join(texts.join(from_text, "doc_id", "left_semi"), "doc_id", "left")
    excerpt = F.when(F.col("excerpt_from") == "old", F.col("_old_excerpt")).otherwise(F.col("_text_excerpt"))
    dropped = drops.withColumn("excerpt", excerpt).select(*DROPPED_COLUMNS)
    dropped = dropped.unionByName(rows.where(F.col("kind") == "dropped").select(*DROPPED_COLUMNS))
    ctx.write_table(dropped, layout.FILTER_DROPPED)
    types = {f.name: f.dataType for f in from_arrow_schema(plan.signals).fields}
    fill = [
        F.col(f"`{c}`") if c in old_signals.columns else F.lit(None).cast(types[c]).alias(c) for c in plan.signals.names
    ]
    reused = old_signals.join(again, "doc_id", "left_anti").select("doc_id", "source", *fill)
    fresh = rows.where(F.col("kind") == "signals").select(
        "doc_id", "source", *[F.col(f"`{c}`") for c in plan.signals.names]
    )
    ctx.write_table(reused.union(fresh), layout.FILTER_SIGNALS)  # by position: unionByName cannot name a dotted column
    merged = Summary()
    for frame in (decided, rows):
        for row in frame.where(F.col("kind") == "summary").select("summary").toLocalIterator():
            merged.merge(json.loads(row["summary"]))
    decided.unpersist()
    rows.unpersist()
    return merged.to_json()


def _renamed(batches: Iterable[pa.RecordBatch], names: list[str]) -> Iterator[pa.RecordBatch]:
    """Each batch with its columns ``s<i>`` named ``names[i]`` again."""
    for batch in batches:
        columns = [names[int(c[1:])] if c[:1] == "s" and c[1:].isdigit() else c for c in batch.schema.names]
        yield batch.rename_columns(columns)


def finish(ctx: RunContext) -> None:
    """Remove the earlier decision's tables once the new ones are written."""
    storage.remove(ctx.path(*layout.parts(PREVIOUS)))
