"""Re-deciding the filter stage from ``filter/signals/`` (docs/stages.md, Re-deciding from the signals): the earlier
decision's tables moved to ``filter/_previous/``, a ``mapInArrow`` over the signal columns decides every document
it can, the filters run again over the text of the others only, and the kept documents are the earlier kept rows
(text as the filters left it) plus the recomputed ones."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from pipeline import storage
from pipeline.filter.batches import (
    DROPPED_COLUMNS,
    EXCERPT,
    LANGUAGE,
    ORIGINAL_EXCERPT,
    Summary,
    filter_partition,
    output_schema,
)
from pipeline.filter.plan import Plan
from pipeline.filter.redecide import (
    OLD_EXCERPT,
    OLD_REASON,
    ORIGINAL,
    measuring_plan,
    redecide_partition,
    redecide_schema,
)
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


BROADCAST_ROWS = 2_000_000  # doc ids a join sends to every task instead of shuffling the documents' text


def redecide(
    ctx: RunContext,
    documents: str,
    plan: Plan,
    base: str,
    measure: Callable[[Any], Any],
    alone: Sequence[str] = (),
    relabel: bool = False,
) -> dict[str, Any]:
    """Write the filter stage's tables from the earlier ones under ``base`` and the new ``plan``; ``measure`` runs the
    filters over a frame of documents (the normal pass: its rows persisted); the filters ``alone`` are measured alone
    first (:func:`pipeline.filter.redecide.measuring_plan`); ``relabel``: the kept documents' language columns come
    from the new decision, not the earlier kept rows. Returns the merged summary."""
    if base == layout.FILTER:  # move the earlier tables aside: Spark cannot replace a table it reads
        storage.remove(ctx.path(*layout.parts(PREVIOUS)))
        storage.commit([(ctx.path(*layout.parts(t)), ctx.path(*layout.parts(_at(PREVIOUS, t)))) for t in MOVED])
    old_kept = ctx.read_table(_at(PREVIOUS, layout.FILTERED))
    old_dropped = ctx.read_table(_at(PREVIOUS, layout.FILTER_DROPPED))
    docs = ctx.read_table(documents)
    current, fresh_alone = _current_signals(ctx.read_table(_at(PREVIOUS, layout.FILTER_SIGNALS)), docs, plan, alone)
    present = [c for c in plan.signals.names if c in current.columns]
    # mapInArrow names its input columns unquoted: a dotted name goes in as s<i> and is renamed back in the task
    wanted = [F.col(f"`{c}`").alias(f"s{i}") for i, c in enumerate(present)]
    reasons = old_dropped.select("doc_id", F.col("reason").alias(OLD_REASON), F.col("excerpt").alias(OLD_EXCERPT))
    if ORIGINAL_EXCERPT in current.columns:  # where a drop by another filter than before finds its excerpt
        wanted.append(F.col(ORIGINAL_EXCERPT).alias(ORIGINAL))
    signals = current.select("doc_id", "source", *wanted).join(reasons, "doc_id", "left")
    schema = redecide_schema(plan)
    decided = signals.mapInArrow(
        per_task(lambda it: redecide_partition(_renamed(it, present), plan, schema)), from_arrow_schema(schema)
    )
    decided = decided.persist(StorageLevel.DISK_ONLY)
    stepless = [name for name in {s.name for s in ctx.config.sources} if not plan.steps.get(name)]
    # one job: the rows of each kind (and of each excerpt's origin) and the summaries
    tally = decided.groupBy("kind", "excerpt_from").agg(F.count(F.lit(1)).alias("n"), F.collect_list("summary"))
    counts: dict[tuple[str, str | None], int] = {}
    merged = Summary()
    for row in tally.collect():
        counts[(row[0], row[1])] = row[2]
        for summary in row[3]:
            merged.merge(json.loads(summary))
    again = decided.where(F.col("kind") == "recompute").select("doc_id")
    again_n = sum(n for (kind, _), n in counts.items() if kind == "recompute")
    if stepless:
        again = again.unionByName(docs.where(F.col("source").isin(stepless)).select("doc_id"))
        again_n = again.count()
    # only the documents the columns cannot settle are read with their text and measured again
    rows = measure(_among(docs, again, again_n, "left_semi")) if again_n else None
    columns = [c for c in docs.columns if c not in LANGUAGE.names] + LANGUAGE.names
    earlier = old_kept.where(~F.col("source").isin(stepless)) if stepless else old_kept
    if relabel:  # the language filter is new, measured alone or gone: the kept documents' labels as decided
        labels = decided.where(F.col("kind") == "kept").select("doc_id", *LANGUAGE.names)
        kept = earlier.drop(*LANGUAGE.names).join(labels, "doc_id").select(*columns)
    else:  # the earlier kept rows (text as the filters left it) less those dropped or measured again now
        gone = decided.where(F.col("kind").isin("dropped", "recompute")).select("doc_id")
        gone_n = sum(n for (kind, _), n in counts.items() if kind in ("dropped", "recompute"))
        kept = _among(earlier, gone, gone_n, "left_anti").select(*columns)
    if rows is not None:
        kept = kept.unionByName(rows.where(F.col("kind") == "kept").select(*columns))
    ctx.write_table(kept, layout.FILTERED)
    drops = decided.where(F.col("kind") == "dropped")
    text_n = counts.get(("dropped", "text"), 0)
    dropped = drops.where(F.col("excerpt_from") == "old").select(*DROPPED_COLUMNS)  # the earlier drop's excerpt
    if text_n:  # a drop by another filter than before: the first characters of the text it saw
        from_text = drops.where(F.col("excerpt_from") == "text").drop("excerpt")
        texts = _among(docs, from_text.select("doc_id"), text_n, "left_semi")
        texts = texts.select("doc_id", F.substring("text", 1, EXCERPT).alias("excerpt"))
        dropped = dropped.unionByName(from_text.join(texts, "doc_id", "left").select(*DROPPED_COLUMNS))
    if rows is not None:
        dropped = dropped.unionByName(rows.where(F.col("kind") == "dropped").select(*DROPPED_COLUMNS))
    ctx.write_table(dropped, layout.FILTER_DROPPED)
    if rows is None and not alone and current.columns == ["doc_id", "source", *plan.signals.names, ORIGINAL_EXCERPT]:
        # no document measured, the same columns: the earlier table is the new one (nothing reads it any more)
        moved = ctx.path(*layout.parts(_at(PREVIOUS, layout.FILTER_SIGNALS)))
        decided.unpersist()
        storage.commit([(moved, ctx.path(*layout.parts(layout.FILTER_SIGNALS)))])
        return merged.to_json()
    types = {f.name: f.dataType for f in from_arrow_schema(plan.signals).fields}
    fill = [
        F.col(f"`{c}`") if c in current.columns else F.lit(None).cast(types[c]).alias(c) for c in plan.signals.names
    ]
    if ORIGINAL_EXCERPT in current.columns:
        fill.append(F.col(ORIGINAL_EXCERPT))
    else:
        fill.append(F.lit(None).cast("string").alias(ORIGINAL_EXCERPT))
    table = _among(current, again, again_n, "left_anti").select("doc_id", "source", *fill)
    if rows is not None:
        fresh = rows.where(F.col("kind") == "signals").select(
            "doc_id", "source", *[F.col(f"`{c}`") for c in plan.signals.names], ORIGINAL_EXCERPT
        )
        table = table.union(fresh)  # by position: unionByName cannot name a dotted column
    ctx.write_table(table, layout.FILTER_SIGNALS)
    if rows is not None:
        for row in rows.where(F.col("kind") == "summary").select("summary").toLocalIterator():
            merged.merge(json.loads(row["summary"]))
    for frame in (decided, rows, fresh_alone):
        if frame is not None:
            frame.unpersist()
    return merged.to_json()


def _current_signals(old: DataFrame, docs: DataFrame, plan: Plan, alone: Sequence[str]) -> tuple[DataFrame, Any]:
    """The earlier signals less the columns of the filters ``alone``, with those filters' columns measured now over
    the documents (doc_id, source, the columns); and the persisted frame of the new columns (None: none)."""
    ours = set(alone)
    kept = [c for c in old.columns if "." not in c or c.split(".", 1)[0] not in ours]
    frame = old.select(*[F.col(f"`{c}`") for c in kept])
    if not ours:
        return frame, None
    sub = measuring_plan(plan, ours)
    sources = [name for name, steps in sub.steps.items() if steps]
    inputs = docs.where(F.col("source").isin(sources))
    schema = output_schema(to_arrow_schema(inputs.schema), sub.signals)
    rows = inputs.mapInArrow(
        per_task(lambda it: filter_partition(it, sub, schema, signals_only=True)), from_arrow_schema(schema)
    )
    names = [F.col(f"`{c}`") for c in sub.signals.names]
    fresh = rows.where(F.col("kind") == "signals").select("doc_id", *names).persist(StorageLevel.DISK_ONLY)
    return frame.join(fresh, "doc_id", "left"), fresh


def _among(frame: DataFrame, ids: DataFrame, n: int, how: str) -> DataFrame:
    """``frame`` joined ``how`` (left_semi, left_anti) on doc_id with the ``n`` ``ids``: sent to every task when few
    (the frame's rows are not shuffled)."""
    return frame.join(F.broadcast(ids) if n <= BROADCAST_ROWS else ids, "doc_id", how)


def _renamed(batches: Iterable[pa.RecordBatch], names: list[str]) -> Iterator[pa.RecordBatch]:
    """Each batch with its columns ``s<i>`` named ``names[i]`` again."""
    for batch in batches:
        columns = [names[int(c[1:])] if c[:1] == "s" and c[1:].isdigit() else c for c in batch.schema.names]
        yield batch.rename_columns(columns)


def finish(ctx: RunContext) -> None:
    """Remove the earlier decision's tables once the new ones are written."""
    storage.remove(ctx.path(*layout.parts(PREVIOUS)))
