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
DECIDED = f"{PREVIOUS}/decided"  # the decision's rows when decided on the driver
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
DRIVER_ROWS = 100_000  # an earlier signals table of at most this many rows is decided on the driver, no Spark job


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
    docs = _Table(ctx, documents)  # read only when a document's text is needed
    schema = redecide_schema(plan)
    here = None if alone else _small_signals(ctx)
    current: DataFrame | None = None
    fresh_alone = None
    if here is not None:  # a small table: decided on the driver, the counts known without a Spark job
        columns_now = here.column_names
        decided, counts, merged = _decide_on_driver(ctx, here, plan, schema)
    else:
        old = ctx.read_table(_at(PREVIOUS, layout.FILTER_SIGNALS))
        current, fresh_alone = _current_signals(old, docs(), plan, alone)
        columns_now = current.columns
        decided, counts, merged = _decide_in_spark(ctx, current, plan, schema)
    stepless = [name for name in {s.name for s in ctx.config.sources} if not plan.steps.get(name)]
    again = decided.rows(("recompute",), ["doc_id"])
    again_n = sum(n for (kind, _), n in counts.items() if kind == "recompute")
    if stepless:
        again = again.unionByName(docs().where(F.col("source").isin(stepless)).select("doc_id"))
        again_n = again.count()
    # only the documents the columns cannot settle are read with their text and measured again
    rows = measure(_among(docs(), again, again_n, "left_semi")) if again_n else None
    gone_n = sum(n for (kind, _), n in counts.items() if kind in ("dropped", "recompute"))
    if rows is None and not stepless and not relabel and not gone_n:  # the same kept rows: the earlier table
        storage.commit(
            [(ctx.path(*layout.parts(_at(PREVIOUS, layout.FILTERED))), ctx.path(*layout.parts(layout.FILTERED)))]
        )
    else:
        names = _dataset(ctx, documents).schema.names  # the documents' columns, from a footer read here
        _write_kept(ctx, names, decided, rows, stepless, relabel, gone_n)
    drops = decided.rows(("dropped",), [*DROPPED_COLUMNS, "excerpt_from"])
    text_n = counts.get(("dropped", "text"), 0)
    dropped = drops.where(F.col("excerpt_from") == "old").select(*DROPPED_COLUMNS)  # the earlier drop's excerpt
    if text_n:  # a drop by another filter than before: the first characters of the text it saw
        from_text = drops.where(F.col("excerpt_from") == "text").drop("excerpt")
        texts = _among(docs(), from_text.select("doc_id"), text_n, "left_semi")
        texts = texts.select("doc_id", F.substring("text", 1, EXCERPT).alias("excerpt"))
        dropped = dropped.unionByName(from_text.join(texts, "doc_id", "left").select(*DROPPED_COLUMNS))
    if rows is not None:
        dropped = dropped.unionByName(rows.where(F.col("kind") == "dropped").select(*DROPPED_COLUMNS))
    ctx.write_table(dropped, layout.FILTER_DROPPED)
    if rows is None and not alone and columns_now == ["doc_id", "source", *plan.signals.names, ORIGINAL_EXCERPT]:
        # no document measured, the same columns: the earlier table is the new one (nothing reads it any more)
        moved = ctx.path(*layout.parts(_at(PREVIOUS, layout.FILTER_SIGNALS)))
        decided.release()
        storage.commit([(moved, ctx.path(*layout.parts(layout.FILTER_SIGNALS)))])
        return merged.to_json()
    types = {f.name: f.dataType for f in from_arrow_schema(plan.signals).fields}
    fill = [F.col(f"`{c}`") if c in columns_now else F.lit(None).cast(types[c]).alias(c) for c in plan.signals.names]
    if ORIGINAL_EXCERPT in columns_now:
        fill.append(F.col(ORIGINAL_EXCERPT))
    else:
        fill.append(F.lit(None).cast("string").alias(ORIGINAL_EXCERPT))
    if current is None:
        current = ctx.read_table(_at(PREVIOUS, layout.FILTER_SIGNALS))
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
    decided.release()
    for frame in (rows, fresh_alone):
        if frame is not None:
            frame.unpersist()
    return merged.to_json()


Counts = dict[tuple[str, str | None], int]  # (kind, excerpt_from) -> rows of the decision


class _Table:
    """A run table read on first call (reading resolves its schema: a Spark job of its own)."""

    def __init__(self, ctx: RunContext, name: str) -> None:
        self.ctx, self.name = ctx, name
        self.frame: DataFrame | None = None

    def __call__(self) -> DataFrame:
        if self.frame is None:
            self.frame = self.ctx.read_table(self.name)
        return self.frame


def _write_kept(
    ctx: RunContext,
    names: list[str],
    decided: Decided,
    rows: DataFrame | None,
    stepless: list[str],
    relabel: bool,
    gone_n: int,
) -> None:
    """``filter/documents/``: the earlier kept rows (text as the filters left it) less those dropped or measured
    again now (``relabel``: with the language columns as decided now), plus the kept ones of ``rows``; ``names``:
    the documents' columns."""
    old_kept = ctx.read_table(_at(PREVIOUS, layout.FILTERED))
    columns = [c for c in names if c not in LANGUAGE.names] + LANGUAGE.names
    earlier = old_kept.where(~F.col("source").isin(stepless)) if stepless else old_kept
    if relabel:  # the language filter is new, measured alone or gone: the kept documents' labels as decided
        labels = decided.rows(("kept",), ["doc_id", *LANGUAGE.names])
        kept = earlier.drop(*LANGUAGE.names).join(labels, "doc_id").select(*columns)
    else:
        gone = decided.rows(("dropped", "recompute"), ["doc_id"])
        kept = _among(earlier, gone, gone_n, "left_anti").select(*columns)
    if rows is not None:
        kept = kept.unionByName(rows.where(F.col("kind") == "kept").select(*columns))
    ctx.write_table(kept, layout.FILTERED)


class Decided:
    """The decision's rows (:func:`pipeline.filter.redecide.redecide_schema`): a persisted ``frame`` decided in
    Spark, or a ``table`` decided on the driver, written as one Parquet file under ``filter/_previous/`` and read
    back (a job reading it runs no Python)."""

    def __init__(self, ctx: RunContext, frame: DataFrame | None = None, table: pa.Table | None = None) -> None:
        if table is not None:
            import pyarrow.parquet as pq

            path = ctx.path(*layout.parts(DECIDED), "part-00000.parquet")
            storage.ensure_parent(path)
            with storage.open_atomic(path) as sink:
                pq.write_table(table, sink)
            frame = ctx.read_table(DECIDED)
        assert frame is not None
        self.frame, self.persisted = frame, table is None

    def rows(self, kinds: tuple[str, ...], columns: list[str]) -> DataFrame:
        """The ``columns`` of the rows of ``kinds``."""
        return self.frame.where(F.col("kind").isin(*kinds)).select(*columns)

    def release(self) -> None:
        """Drop the persisted frame's blocks."""
        if self.persisted:
            self.frame.unpersist()


def _decide_in_spark(
    ctx: RunContext, current: DataFrame, plan: Plan, schema: pa.Schema
) -> tuple[Decided, Counts, Summary]:
    """The decision of every document of the signals ``current`` as a ``mapInArrow`` (rows kept on disk), the rows
    of each kind and excerpt origin, and the merged summary (one job)."""
    present = [c for c in plan.signals.names if c in current.columns]
    # mapInArrow names its input columns unquoted: a dotted name goes in as s<i> and is renamed back in the task
    wanted = [F.col(f"`{c}`").alias(f"s{i}") for i, c in enumerate(present)]
    old_dropped = ctx.read_table(_at(PREVIOUS, layout.FILTER_DROPPED))
    reasons = old_dropped.select("doc_id", F.col("reason").alias(OLD_REASON), F.col("excerpt").alias(OLD_EXCERPT))
    if ORIGINAL_EXCERPT in current.columns:  # where a drop by another filter than before finds its excerpt
        wanted.append(F.col(ORIGINAL_EXCERPT).alias(ORIGINAL))
    signals = current.select("doc_id", "source", *wanted).join(reasons, "doc_id", "left")
    decided = signals.mapInArrow(
        per_task(lambda it: redecide_partition(_renamed(it, present), plan, schema)), from_arrow_schema(schema)
    )
    decided = decided.persist(StorageLevel.DISK_ONLY)
    tally = decided.groupBy("kind", "excerpt_from").agg(F.count(F.lit(1)).alias("n"), F.collect_list("summary"))
    counts: Counts = {}
    merged = Summary()
    for row in tally.collect():
        counts[(row[0], row[1])] = row[2]
        for summary in row[3]:
            merged.merge(json.loads(summary))
    return Decided(ctx, frame=decided), counts, merged


def _small_signals(ctx: RunContext) -> pa.Table | None:
    """The earlier signals table read here when it has at most :data:`DRIVER_ROWS` rows (its footers say), else
    None."""
    dataset = _dataset(ctx, _at(PREVIOUS, layout.FILTER_SIGNALS))
    return dataset.to_table() if dataset.count_rows() <= DRIVER_ROWS else None


def _dataset(ctx: RunContext, name: str) -> Any:
    """A run table as a pyarrow dataset (Spark's ``_SUCCESS`` and hidden checksum files left out)."""
    import pyarrow.dataset as ds

    fs, inner = storage.resolve(ctx.path(*layout.parts(name)))
    return ds.dataset(inner, filesystem=fs, format="parquet")


def _decide_on_driver(
    ctx: RunContext, here: pa.Table, plan: Plan, schema: pa.Schema
) -> tuple[Decided, Counts, Summary]:
    """:func:`_decide_in_spark` for the signals ``here`` on the driver: the same batch step over the same columns,
    its rows less the summaries."""
    present = [c for c in plan.signals.names if c in here.column_names]
    names = ["doc_id", "source", *present]
    if ORIGINAL_EXCERPT in here.column_names:
        names.append(ORIGINAL_EXCERPT)
    signals = here.select(names).rename_columns([ORIGINAL if c == ORIGINAL_EXCERPT else c for c in names])
    reasons = _dataset(ctx, _at(PREVIOUS, layout.FILTER_DROPPED)).to_table(columns=["doc_id", "reason", "excerpt"])
    reasons = reasons.rename_columns(["doc_id", OLD_REASON, OLD_EXCERPT])
    joined = signals.join(reasons, "doc_id", join_type="left outer")
    parts = list(redecide_partition(joined.to_batches(max_chunksize=10_000), plan, schema))
    table = pa.Table.from_batches(parts, schema)
    kinds = table.column("kind").to_pylist()
    counts: Counts = {}
    merged = Summary()
    for kind, origin, summary in zip(
        kinds, table.column("excerpt_from").to_pylist(), table.column("summary").to_pylist(), strict=True
    ):
        if kind == "summary":
            merged.merge(json.loads(summary))
        else:
            counts[(kind, origin)] = counts.get((kind, origin), 0) + 1
    return Decided(ctx, table=table.filter(pa.array([k != "summary" for k in kinds], pa.bool_()))), counts, merged


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
