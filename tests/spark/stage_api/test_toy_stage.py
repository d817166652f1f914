"""A stage defined entirely in tests/ joins a run: resumed, verified, accounted and reported, with no change to
``pipeline/run`` or ``pipeline/report`` (issue #27: a stage owns its whole definition).

The toy stage sits between ingest and dedup and drops every document whose text holds the word "thread",
through the Filter contract; the test counts those documents in the sample itself, with its own reading of
the raw files, and checks the figures every reader of the run sees.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.config import load_config_text
from pipeline.report.summary import summary_text
from pipeline.run.runner import run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.toy_stage import KEPT, TOY_STAGES, WORD

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[3]


def _word_documents(run: Path) -> dict[str, int]:
    """Documents ingest wrote whose text holds the word, per source, read with pyarrow (not through the stage)."""
    table = pq.read_table(run / layout.DOCUMENTS, columns=["source", "text"]).to_pylist()
    found = {"web": 0, "wiki": 0, "forum": 0}
    for row in table:
        found[row["source"]] += WORD in row["text"].lower()
    return found


def _context(spark, out: Path) -> RunContext:
    text = (REPO / "conf" / "local.yaml").read_text()
    return RunContext(load_config_text(text, [f"output={out}", "spark.master=local[2]"]), spark=spark)


def test_a_stage_from_tests_is_resumed_verified_accounted_and_reported(spark, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    messages: list[str] = []
    run_stages(_context(spark, out), log=messages.append, stages=TOY_STAGES)
    expected = _word_documents(out)
    assert sum(expected.values()) > 0, "the sample has no document to drop: pick another word"

    manifest = json.loads((out / "manifest.json").read_text())
    for source, row in manifest["accounting"].items():
        assert row["removed"]["toy_word"] == row["toy_word"] == expected[source], source
        assert row["documents_read"] == row["rejected"] + sum(row["removed"].values()) + row["written"]
        assert row["toy_kept"] == manifest["stages"]["toy"]["counts"]["sources"][source]["documents"]
    report = json.loads((out / "report.json").read_text())
    assert report["toy"] == {"dropped": sum(expected.values()), "word": WORD}
    assert report["summary"]["removed"]["toy_word"] == sum(expected.values())
    page = (out / "report.html").read_text()
    assert "<h2>Toy</h2>" in page and "<th>toy word</th>" in page
    assert f"toy word: web {expected['web']}" in summary_text(manifest)
    kept_ids = set(pq.read_table(out / KEPT, columns=["doc_id"])["doc_id"].to_pylist())
    survivors = set(pq.read_table(out / layout.SURVIVORS, columns=["doc_id"])["doc_id"].to_pylist())
    assert survivors <= kept_ids  # dedup read what the toy stage passed on

    messages.clear()
    run_stages(_context(spark, out), log=messages.append, stages=TOY_STAGES)
    assert "[toy] already finished, reusing its outputs" in messages

    part = next(p for p in (out / KEPT).iterdir() if p.name.endswith(".parquet"))
    part.unlink()
    messages.clear()
    run_stages(_context(spark, out), log=messages.append, stages=TOY_STAGES)
    assert any(
        re.match(r"\[toy\] WARNING: its outputs changed since it finished: toy/kept/.*: missing", m) for m in messages
    )
    assert "[toy] running" in messages and "[dedup] running" in messages
