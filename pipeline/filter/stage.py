"""The filter stage's Spark plan (docs/stages.md, The filter stage): one ``mapInArrow`` pass over the documents
ingest passed on, kept on disk (not in memory) while the kept documents go to ``filter/documents/``, the dropped
ones to ``filter/dropped/`` and the partitions' summaries, merged on the driver one at a time, to
``filter/summary.json``."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from pipeline import storage
from pipeline.config import PipelineConfig
from pipeline.filter import entries, registry
from pipeline.filter.batches import (
    DROPPED_COLUMNS,
    EXCERPT,
    LANGUAGE,
    ORIGINAL_EXCERPT,
    Summary,
    filter_partition,
    output_schema,
)
from pipeline.filter.plan import Plan, make_plan, summary_json
from pipeline.filter.redecide import anew, relabels, reuse_problem, signals_meta
from pipeline.filter.report_html import report_html
from pipeline.filter.report_section import report_section
from pipeline.filter.spark import redecide
from pipeline.spark.ranking import at_or_before, cut_points
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, SourceTally, Stage

log = logging.getLogger("pipeline.filter")


def run_filter(ctx: RunContext, documents: str, inputs: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The table ``documents`` -> ``filter/documents/``, ``filter/dropped/``, ``filter/signals/``,
    ``filter/summary.json``; counts per source (``inputs``: the paths of the other data it reads, by name). When
    only thresholds changed since the signals were measured, the decision is made from ``filter/signals/``
    (docs/stages.md, Re-deciding from the signals)."""
    plan = make_plan(ctx.config, inputs=inputs)
    names = [s.name for s in ctx.config.sources]
    meta = signals_meta(plan, ctx.path(*layout.parts(documents)))
    previous = redecide.previous_meta(ctx)
    why = reuse_problem(previous, meta)
    if why is None and (plan.columns or plan.ranking is not None):
        why = "a filter sets columns on the kept documents or ranks the whole run (the signals keep neither)"
    ranking: dict[str, Any] = {}
    if previous is not None and why is None:
        alone = anew(previous, meta)
        decided = sorted({s.entry["name"] for steps in plan.steps.values() for s in steps} - set(alone))
        measured = "".join(f"; measuring {name} alone ({reason})" for name, reason in alone.items())
        log.info("filter: re-deciding from filter/signals/ (%s from their columns%s)", ", ".join(decided), measured)
        merged = redecide.redecide(
            ctx,
            documents,
            plan,
            previous["_base"],
            lambda frame: _measured(frame, plan),
            alone=list(alone),
            relabel=relabels(previous, meta, alone),
        )
        how = "re-decided from filter/signals/" + (f"; measured {', '.join(alone)}" if alone else "")
    else:
        log.info("filter: measuring every document (%s)", why)
        storage.remove(ctx.path(*layout.parts(layout.FILTER_SIGNALS_META)))  # the signals are stale until rewritten
        merged, ranking = _measure(ctx, ctx.read_table(documents), plan)
        how = "measured"
    summary = summary_json(plan, merged, names)
    if ranking:
        summary["ranking"] = ranking
    storage.write_json(ctx.path(*layout.parts(layout.FILTER_SUMMARY)), json.loads(json.dumps(summary, default=str)))
    storage.write_json(ctx.path(*layout.parts(layout.FILTER_SIGNALS_META)), meta)
    redecide.finish(ctx)
    return {
        "sources": {
            name: {
                "read": row["read"],
                "documents": row["kept"],
                "removed": dict(sorted(row["dropped"].items())),
                "changed": row["changed"],
            }
            for name, row in summary["sources"].items()
        },
        "decision": how,
    }


def words() -> Column:
    """fastText's words of the ``text`` column: runs of characters other than its separators (space, \\n, \\r,
    \\t, \\v, \\f, \\0)."""
    return F.size(F.filter(F.split(F.col("text"), r"[ \n\r\t\x0B\f\x00]+"), lambda w: w != ""))


def ranked(passed: DataFrame, ranking: Mapping[str, Any]) -> tuple[DataFrame, dict[str, Any]]:
    """The documents every filter passed, less those below the ``keep_top`` cut of the whole run, with
    ``quality_bucket`` when ``buckets`` is set (docs/stages.md, The fastText classifier); and what summary.json
    records of the ranking (with ``dropped``: the rows below the cut, ``removed``: their count per source)."""
    score, doc_id = F.col(ranking["column"]), F.col("doc_id")
    found: dict[str, Any] = {"label": ranking["label"], "column": ranking["column"], "reason": ranking["reason"]}
    if ranking["keep_top"] is not None:
        weight = words() if ranking["by"] == "tokens" else F.lit(1)
        scored = passed.where(score.isNotNull()).select(score.alias("s"), "doc_id", weight.cast("long").alias("w"))
        (cut,), total = cut_points(scored, [ranking["keep_top"]])
        inside = at_or_before(score, doc_id, cut)
        cut_score = F.lit(cut[0] if cut else None).cast("double")
        detail = F.format_string(
            f"{ranking['label']} %.6f below the run's top {ranking['keep_top']} (cut %.6f)", score, cut_score
        )
        below = passed.where(score.isNotNull() & ~inside)
        found["dropped"] = below.select(
            "doc_id",
            "source",
            F.lit(ranking["reason"]).alias("reason"),
            detail.alias("detail"),
            score.alias("value"),
            cut_score.alias("threshold"),
            F.substring("text", 1, EXCERPT).alias("excerpt"),
        )
        found["removed"] = {r["source"]: r["count"] for r in below.groupBy("source").count().collect()}
        found.update(keep_top=ranking["keep_top"], by=ranking["by"], total=total, cut=list(cut) if cut else None)
        passed = passed.where(score.isNull() | inside)
    if ranking["buckets"]:
        count = ranking["buckets"]
        scored = passed.where(score.isNotNull()).select(score.alias("s"), "doc_id", words().cast("long").alias("w"))
        cuts, tokens = cut_points(scored, [j / count for j in range(1, count)])
        below_cuts = sum((F.when(at_or_before(score, doc_id, c), 0).otherwise(1) for c in cuts), F.lit(0))
        bucket = F.when(score.isNull(), F.lit(None)).otherwise(F.lit(count - 1) - below_cuts)
        passed = passed.withColumn(ranking["bucket_column"], bucket.cast("int"))
        found.update(buckets=count, bucket_tokens=tokens, bucket_cuts=[list(c) if c else None for c in cuts])
    return passed, found


def _measured(docs: Any, plan: Plan) -> Any:
    """The batch step over ``docs``: every kept, dropped, signals and summary row, kept on local disk."""
    schema = output_schema(to_arrow_schema(docs.schema), plan.signals, plan.columns)
    rows = docs.mapInArrow(per_task(lambda it: filter_partition(it, plan, schema)), from_arrow_schema(schema))
    return rows.persist(StorageLevel.DISK_ONLY)  # the filters run once; documents never sit in memory


def _measure(ctx: RunContext, docs: Any, plan: Plan) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the filters over every document and write the stage's three tables; the merged summary and what
    summary.json records of a ranking (:func:`ranked`)."""
    rows = _measured(docs, plan)
    added = [*LANGUAGE.names, *plan.columns]
    passed = rows.where(F.col("kind") == "kept").select(*[c for c in docs.columns if c not in added], *added)
    ranking: dict[str, Any] = {}
    if plan.ranking is not None:  # the whole run ranked by a score (fasttext_classifier keep_top, buckets)
        passed, ranking = ranked(passed, plan.ranking)
    ctx.write_table(passed, layout.FILTERED)
    # the dropped rows, signals and summaries apart, so that the documents' cached blocks are read once more, not twice
    signals = [F.col(f"`{name}`") for name in plan.signals.names]
    rest = rows.where(F.col("kind") != "kept").select("kind", *DROPPED_COLUMNS, "summary", *signals)
    rest = rest.persist(StorageLevel.DISK_ONLY)
    dropped = rest.where(F.col("kind") == "dropped").select(*DROPPED_COLUMNS)
    if "dropped" in ranking:
        dropped = dropped.unionByName(ranking.pop("dropped"))
    ctx.write_table(dropped, layout.FILTER_DROPPED)
    signal_rows = rest.where(F.col("kind") == "signals").select("doc_id", "source", *signals, ORIGINAL_EXCERPT)
    ctx.write_table(signal_rows, layout.FILTER_SIGNALS)
    rows.unpersist()
    merged = Summary()
    for row in rest.where(F.col("kind") == "summary").select("summary").toLocalIterator():
        merged.merge(json.loads(row["summary"]))
    rest.unpersist()
    for source, n in ranking.pop("removed", {}).items():  # the ranking's drops, after the batches' counts
        counters = merged.source(source)
        counters["kept"] -= n
        counters["dropped"][ranking["reason"]] = counters["dropped"].get(ranking["reason"], 0) + n
    return merged.to_json(), ranking


class Filter(Stage):
    """The documents -> the ones every filter kept (passed on), the dropped ones, a summary."""

    name = "filter"
    config_keys = ("filter", "sources[].filter")
    reads = ("documents",)
    passes = {"documents": layout.FILTERED}
    writes = (layout.FILTER,)
    passes_on = "passed_filters"
    removals_as = "filtered"
    removal_tables = {layout.FILTER_REASONS: layout.FILTER_DROPPED}  # each row names its own reason
    report_keys = ("filter", "filter_signals")
    stop_when_empty = True

    @property
    def optional_reads(self) -> tuple[str, ...]:  # type: ignore[override]
        """The data the registered filters may read besides the documents (``BaseFilter.READS``: the model
        train-classifier passes on, for fasttext_classifier's ``model: run``)."""
        return registry.reads()

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        paths = {name: ctx.path(*layout.parts(data.table)) for name, data in inputs.items() if name != "documents"}
        return run_filter(ctx, inputs["documents"].table, paths)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        values: dict[str, Any] = {
            "filter": config.filter,
            "sources": {s.name: s.filter for s in config.sources if s.filter is not None},
        }
        files = entries.file_digests(config)  # what the filters read, by content: an edited file is not reused
        if files:
            values["files_sha256"] = files
        return values

    def applies(self, config: PipelineConfig) -> bool:
        return entries.runs_filters(config)

    def check_config(self, config: PipelineConfig) -> None:
        entries.check_config(config)

    def report(self, run: str, counts: dict[str, Any]) -> dict[str, Any] | None:
        return report_section(run)

    def report_html(self, data: dict[str, Any]) -> list[str]:
        return report_html(data)

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        """Every document the stage read per source is dropped for a ``"<filter>.<rule>"`` reason or passed on."""
        return {
            name: SourceTally(documents=row["documents"], read=row["read"], removed=row["removed"])
            for name, row in counts.get("sources", {}).items()
        }


STAGE = Filter()
