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
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from pipeline import storage
from pipeline.config import PipelineConfig
from pipeline.filter import entries
from pipeline.filter.batches import DROPPED_COLUMNS, LANGUAGE, Summary, filter_partition, output_schema
from pipeline.filter.plan import Plan, make_plan, summary_json
from pipeline.filter.redecide import reuse_problem, signals_meta
from pipeline.filter.report_section import report_section
from pipeline.filter.spark import redecide
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, SourceTally, Stage

log = logging.getLogger("pipeline.filter")


def run_filter(ctx: RunContext, documents: str) -> dict[str, Any]:
    """The table ``documents`` -> ``filter/documents/``, ``filter/dropped/``, ``filter/signals/``,
    ``filter/summary.json``; counts per source. When only thresholds changed since the signals were measured, the
    decision is made from ``filter/signals/`` (docs/stages.md, Re-deciding from the signals)."""
    plan = make_plan(ctx.config)
    names = [s.name for s in ctx.config.sources]
    meta = signals_meta(plan, ctx.path(*layout.parts(documents)))
    previous = redecide.previous_meta(ctx)
    why = reuse_problem(previous, meta)
    if previous is not None and why is None:
        log.info("filter: re-deciding from filter/signals/ (the filters measure as before: thresholds changed)")
        merged = redecide.redecide(ctx, documents, plan, previous["_base"], lambda frame: _measured(frame, plan))
        how = "re-decided from filter/signals/"
    else:
        log.info("filter: measuring every document (%s)", why)
        storage.remove(ctx.path(*layout.parts(layout.FILTER_SIGNALS_META)))  # the signals are stale until rewritten
        merged = _measure(ctx, ctx.read_table(documents), plan)
        how = "measured"
    summary = summary_json(plan, merged, names)
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


def _measured(docs: Any, plan: Plan) -> Any:
    """The batch step over ``docs``: every kept, dropped, signals and summary row, kept on local disk."""
    schema = output_schema(to_arrow_schema(docs.schema), plan.signals)
    rows = docs.mapInArrow(per_task(lambda it: filter_partition(it, plan, schema)), from_arrow_schema(schema))
    return rows.persist(StorageLevel.DISK_ONLY)  # the filters run once; documents never sit in memory


def _measure(ctx: RunContext, docs: Any, plan: Plan) -> dict[str, Any]:
    """Run the filters over every document and write the stage's three tables; the merged summary."""
    rows = _measured(docs, plan)
    kept = [c for c in docs.columns if c not in LANGUAGE.names] + LANGUAGE.names
    ctx.write_table(rows.where(F.col("kind") == "kept").select(*kept), layout.FILTERED)
    # the dropped rows, signals and summaries apart, so that the documents' cached blocks are read once more, not twice
    signals = [F.col(f"`{name}`") for name in plan.signals.names]
    rest = rows.where(F.col("kind") != "kept").select("kind", *DROPPED_COLUMNS, "summary", *signals)
    rest = rest.persist(StorageLevel.DISK_ONLY)
    ctx.write_table(rest.where(F.col("kind") == "dropped").select(*DROPPED_COLUMNS), layout.FILTER_DROPPED)
    ctx.write_table(rest.where(F.col("kind") == "signals").select("doc_id", "source", *signals), layout.FILTER_SIGNALS)
    rows.unpersist()
    merged = Summary()
    for row in rest.where(F.col("kind") == "summary").select("summary").toLocalIterator():
        merged.merge(json.loads(row["summary"]))
    rest.unpersist()
    return merged.to_json()


class Filter(Stage):
    """The documents -> the ones every filter kept (passed on), the dropped ones, a summary."""

    name = "filter"
    config_keys = ("filter", "sources[].filter")
    reads = ("documents",)
    passes = {"documents": layout.FILTERED}
    writes = (layout.FILTER,)
    passes_on = "passed_filters"
    removals_as = "filtered"
    stop_when_empty = True

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return run_filter(ctx, inputs["documents"].table)

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

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        """Every document the stage read per source is dropped for a ``"<filter>.<rule>"`` reason or passed on."""
        return {
            name: SourceTally(documents=row["documents"], read=row["read"], removed=row["removed"])
            for name, row in counts.get("sources", {}).items()
        }


STAGE = Filter()
