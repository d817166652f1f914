"""The spans stage run on given documents, for the spans part tests (tests/spark/spans/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipeline.config import load_config_text
from pipeline.spans.stage import run_spans
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext

REPO = Path(__file__).resolve().parents[1]


def run_stage(spark: Any, tmp: Path, docs: list[tuple[int, str]], overrides: list[str]):
    """conf/local.yaml with ``overrides``, the documents written as the survivors (sources web, wiki, forum in
    turn), the spans stage run: its counts, the kept texts by doc_id, the too-short doc_ids and the removed rows."""
    text = (REPO / "conf" / "local.yaml").read_text()
    ctx = RunContext(load_config_text(text, [f"output={tmp / 'run'}", *overrides]), spark=spark)
    sources = ("web", "wiki", "forum")
    rows = [(doc_id, sources[i % 3], text) for i, (doc_id, text) in enumerate(docs)]
    ctx.write_table(spark.createDataFrame(rows, "doc_id long, source string, text string"), layout.SURVIVORS)
    counts = run_spans(ctx, layout.SURVIVORS)
    run = tmp / "run"
    kept = {r["doc_id"]: r["text"] for r in pq.read_table(run / layout.SPANS_DOCUMENTS).to_pylist()}
    too_short = {r["doc_id"] for r in pq.read_table(run / layout.SPANS_TOO_SHORT).to_pylist()}
    removed = pq.read_table(run / layout.SPANS_REMOVED).to_pylist()
    return counts, kept, too_short, removed
