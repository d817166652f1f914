"""The filter stage on the bundled sample with toy filters (tests/filter_toys.py): what it keeps, drops and rewrites,
its summary, the accounting, resume, ``explain`` and ``sample --filtered``, each checked against facts the test
computes itself from ingest's documents (read with pyarrow) and the toy rules (ASCII only, word counts, digits)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from pipeline.cli.commands import main
from pipeline.config import load_config_text
from pipeline.filter import registry
from pipeline.run.runner import run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.filter_toys import TOYS

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[3]
MIN_WORDS = 150
SETS = [
    f"filter=[{{name: toy_script, languages: [ascii]}}, {{name: toy_length, min_words: {MIN_WORDS}}}, "
    "{name: toy_digits}]",
    "sources.forum.filter=[]",  # the forum keeps every document, untouched
]


def _table(run: Path, name: str) -> list[dict]:
    return ds.dataset(run / name, format="parquet", exclude_invalid_files=True).to_table().to_pylist()


def _context(spark, out: Path) -> RunContext:
    text = (REPO / "conf" / "local.yaml").read_text()
    return RunContext(load_config_text(text, [f"output={out}", "spark.master=local[2]", *SETS]), spark=spark)


def _expected(doc: dict) -> tuple[str | None, str]:
    """(the reason the toy rules drop ``doc`` for or None, its text after them), by the test's own reading."""
    text = doc["text"]
    if doc["source"] == "forum":
        return None, text
    if not text.isascii():
        return "toy_script.not_listed", text
    if len(text.split()) < MIN_WORDS:
        return "toy_length.too_short", text
    return None, re.sub("[0-9]", "#", text)


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory):
    for name, target in TOYS.items():
        registry.register(name, target)
    out = tmp_path_factory.mktemp("filter") / "run"
    messages: list[str] = []
    run_stages(_context(spark, out), log=messages.append)
    docs = {r["doc_id"]: r for r in _table(out, layout.DOCUMENTS)}
    yield {"out": out, "docs": docs, "expected": {i: _expected(d) for i, d in docs.items()}, "log": messages}
    for name in TOYS:
        registry.unregister(name)


def test_kept_and_dropped_documents_follow_the_rules(run):
    out, docs, expected = run["out"], run["docs"], run["expected"]
    kept = {r["doc_id"]: r for r in _table(out, layout.FILTERED)}
    dropped = {r["doc_id"]: r for r in _table(out, layout.FILTER_DROPPED)}
    assert {i: r["text"] for i, r in kept.items()} == {i: t for i, (why, t) in expected.items() if why is None}
    assert {i: r["reason"] for i, r in dropped.items()} == {i: why for i, (why, _) in expected.items() if why}
    assert {"toy_script.not_listed", "toy_length.too_short"} <= set(r["reason"] for r in dropped.values())
    for i, row in dropped.items():
        assert row["source"] == docs[i]["source"] and row["excerpt"] == docs[i]["text"][:300]
        if row["reason"] == "toy_length.too_short":
            assert (row["value"], row["threshold"]) == (len(docs[i]["text"].split()), MIN_WORDS)
    for row in kept.values():
        assert (row["language"], row["language_score"]) == ((None, None) if row["source"] == "forum" else ("ascii", 1))
    survivors = {r["doc_id"] for r in _table(out, layout.SURVIVORS)}
    assert survivors and survivors <= set(kept)  # dedup read what the filter stage passed on


def test_summary_and_accounting_count_every_document(run):
    out, docs, expected = run["out"], run["docs"], run["expected"]
    summary = json.loads((out / layout.FILTER_SUMMARY).read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    for source in ("web", "wiki", "forum"):
        mine = [i for i, d in docs.items() if d["source"] == source]
        reasons: dict[str, int] = {}
        for i in mine:
            if expected[i][0]:
                reasons[expected[i][0]] = reasons.get(expected[i][0], 0) + 1
        row = summary["sources"][source]
        assert (row["read"], row["kept"], row["dropped"]) == (len(mine), len(mine) - sum(reasons.values()), reasons)
        changed = sum(1 for i in mine if expected[i][0] is None and expected[i][1] != docs[i]["text"])
        assert row["changed"].get("toy_digits", 0) == changed
        account = manifest["accounting"][source]
        assert account["filtered"] == reasons and account["passed_filters"] == row["kept"]
        assert all(account["removed"][r] == n for r, n in reasons.items())
        assert account["documents_read"] == account["rejected"] + sum(account["removed"].values()) + account["written"]
    words = [len(d["text"].split()) for i, d in docs.items() if d["source"] == "web" and d["text"].isascii()]
    counts = summary["measures"]["toy_length.too_short"]["counts"]["web"]
    assert sum(counts) == len(words) and summary["filters"]["forum"] == []
    report = json.loads((out / "report.json").read_text())
    assert report["sources"]["web"]["filtered"] == manifest["accounting"]["web"]["filtered"]
    # the report's filter section reads the stage's own summary: the same counts, each rule's histogram
    section = report["filter"]
    assert {s: r["dropped"] for s, r in section["sources"].items()} == {
        s: r["dropped"] for s, r in summary["sources"].items()
    }
    histogram = section["measures"]["toy_length.too_short"]["counts"]["web"]
    assert sum(histogram["counts"]) + histogram["underflow"] + histogram["overflow"] == len(words)
    assert "Filter</h2>" in (out / "report.html").read_text()


def test_a_finished_filter_stage_is_reused(spark, run):
    messages: list[str] = []
    run_stages(_context(spark, run["out"]), log=messages.append)
    assert "[filter] already finished, reusing its outputs" in messages


def test_explain_and_sample_name_the_rule_value_and_threshold(run, capsys):
    out, docs, expected = run["out"], run["docs"], run["expected"]
    short = sorted(i for i, (why, _) in expected.items() if why == "toy_length.too_short")
    assert main(["explain", str(out), str(short[0]), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["status"] == "removed" and info["removed_as"] == "toy_length.too_short"
    assert info["evidence"]["value"] == len(docs[short[0]]["text"].split())
    assert info["evidence"]["threshold"] == MIN_WORDS
    assert main(["explain", str(out), str(short[0])]) == 0
    words = len(docs[short[0]]["text"].split())
    assert f"removed as toy_length.too_short: detail {words} words, value {words}.0, threshold {MIN_WORDS}.0" in (
        capsys.readouterr().out
    )
    assert main(["sample", str(out), "--removed", "10000", "--json"]) == 0
    removed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    reasons = {r["doc_id"]: r["reason"] for r in removed if r.get("reason", "").startswith("toy_")}
    assert reasons == {i: why for i, (why, _) in expected.items() if why}
    assert main(["sample", str(out), "--filtered", "toy_length", "-n", "3", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == min(3, len(short))
    for row in rows:
        assert row["doc_id"] in short and row["value"] == len(docs[row["doc_id"]]["text"].split())
    assert main(["sample", str(out), "--filtered", "toy_script.not_listed", "-n", "100"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("toy_script.not_listed") == sum(
        1 for why, _ in expected.values() if why == "toy_script.not_listed"
    )
