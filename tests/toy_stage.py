"""A stage defined outside ``pipeline/`` (test_toy_stage.py): it drops documents holding a word, through the
Filter contract, between ingest and dedup. In a module of its own so that Spark's workers can import it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.config import PipelineConfig
from pipeline.run.registry import STAGES
from pipeline.spark.worker_task import per_task
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.filter import FilterResult, apply_filters
from pipeline.stage_api.stage import Data, SourceTally, Stage, source_tally

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


def _run_toy(ctx: RunContext, documents: str) -> dict:
    docs = ctx.read_table(documents)
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


class Toy(Stage):
    """The documents -> those without the word (passed on, as the documents the next stage reads)."""

    name = "toy"
    reads = ("documents",)
    passes = {"documents": KEPT}
    writes = ("toy",)
    passes_on = "toy_kept"

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return _run_toy(ctx, inputs["documents"].table)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        return {"word": WORD}

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        return source_tally(counts, "documents", read="read", removals=("toy_word",))

    def report(self, run: str, counts: dict[str, Any]) -> dict[str, Any]:
        return {"toy": {"dropped": sum(row["toy_word"] for row in counts["sources"].values()), "word": WORD}}


TOY = Toy()
TOY_STAGES = (STAGES[0], TOY, *STAGES[1:])
