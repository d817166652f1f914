"""A stage defined outside ``pipeline/`` (test_toy_stage.py): it drops documents holding a word, through the
Filter contract, between ingest and dedup. In a module of its own so that Spark's workers can import it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipeline.config import PipelineConfig
from pipeline.run.registry import STAGES
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.filter import FilterResult, apply_filters
from pipeline.stage_api.stage import Stage, source_tally

WORD = "thread"
KEPT, DROPPED = "toy/kept", "toy/dropped"


class WordFilter:
    name = "toy_word"

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        texts = batch.column("text").to_pylist()
        hits = [WORD in t.lower() for t in texts]
        return FilterResult(
            np.array([not h for h in hits]),
            [self.name if h else None for h in hits],
            [f"contains {WORD!r}" if h else None for h in hits],
        )


def _kept_batches(batches):
    for batch in batches:
        yield apply_filters(batch, [WordFilter()]).kept


def _run_toy(ctx: RunContext) -> dict:
    docs = ctx.read_table(ctx.passed_on)
    kept = docs.mapInArrow(per_task(_kept_batches), docs.schema)
    ctx.write_table(kept, KEPT)
    before = {r["source"]: r["count"] for r in docs.groupBy("source").count().collect()}
    after = {r["source"]: r["count"] for r in ctx.read_table(KEPT).groupBy("source").count().collect()}
    sources = {
        s.name: {"read": before.get(s.name, 0), "toy_word": before.get(s.name, 0) - after.get(s.name, 0),
                 "documents": after.get(s.name, 0)}
        for s in ctx.config.sources
    }  # fmt: skip
    return {"sources": sources}


def _report(run: str, counts: dict) -> dict:
    return {"toy": {"dropped": sum(row["toy_word"] for row in counts["sources"].values()), "word": WORD}}


def _inputs(config: PipelineConfig) -> dict:
    return {"word": WORD}


TOY = Stage(
    "toy",
    (),
    _inputs,
    _run_toy,
    outputs=("toy",),
    tally=source_tally("documents", read="read", removals=("toy_word",)),
    passes_on="toy_kept",
    reads=(layout.PASSED_ON,),
    passes=KEPT,
    report=_report,
)
TOY_STAGES = (STAGES[0], TOY, *STAGES[1:])
