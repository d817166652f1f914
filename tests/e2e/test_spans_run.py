"""A whole run with the spans stage on local Spark (docs/spans.md): the stage sits between dedup and tokenize,
its cuts equal the suffix-array oracle over dedup's survivors, tokenize reads its documents, the accounting
holds and the report carries its section."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.config import load_config_text
from pipeline.megatron.reader import IndexedDataset
from pipeline.run.runner import run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.spans_oracle import oracle_ranges, oracle_text

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
K = 40


def test_a_run_with_spans_cuts_what_the_oracle_cuts_and_accounts_for_every_document(
    spark, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    text = (REPO / "conf" / "local.yaml").read_text()
    overrides = [f"output={out}", "spark.master=local[2]", f"spans.exact_substring.min_tokens={K}"]
    messages: list[str] = []
    run_stages(RunContext(load_config_text(text, overrides), spark=spark), log=messages.append)
    assert any("spans" in m for m in messages)

    survivors = [(r["doc_id"], r["text"]) for r in pq.read_table(out / layout.SURVIVORS).to_pylist()]
    expected = oracle_ranges(survivors, K)
    assert expected, f"no span of {K} bytes repeats in the sample's survivors: lower K"
    removed: dict[int, list[tuple[int, int]]] = {}
    for row in pq.read_table(out / layout.SPANS_REMOVED).to_pylist():
        removed.setdefault(row["doc_id"], []).append((row["start"], row["end"]))
    assert {d: sorted(r) for d, r in removed.items()} == expected
    after = {r["doc_id"]: r["text"] for r in pq.read_table(out / layout.SPANS_DOCUMENTS).to_pylist()}
    emptied = {r["doc_id"] for r in pq.read_table(out / layout.SPANS_EMPTIED).to_pylist()}
    for doc_id, before in survivors:
        want = oracle_text(before, expected.get(doc_id, []))
        assert (doc_id in emptied) == (not want.strip() and doc_id in expected)
        if doc_id not in emptied:
            assert after[doc_id] == want

    manifest = json.loads((out / "manifest.json").read_text())
    spans = manifest["stages"]["spans"]["counts"]["sources"]
    for source, row in manifest["accounting"].items():
        assert row["documents_read"] == row["rejected"] + sum(row["removed"].values()) + row["written"], source
        assert row["after_spans"] == spans[source]["documents"] == row["survivors"] - row["spans_emptied"]
    written = 0
    for source in manifest["accounting"]:
        written += IndexedDataset(str(out / layout.MEGATRON / source)).num_documents
    assert written == len(after)  # tokenize read the spans stage's documents, one Megatron document each
    report = json.loads((out / "report.json").read_text())
    cut_bytes = sum(
        len(t.encode("utf-8")) - len(oracle_text(t, expected[d]).encode("utf-8")) for d, t in survivors if d in expected
    )
    assert sum(sum(v.values()) for v in report["spans"]["removed_bytes"].values()) == cut_bytes
    assert report["spans"]["most_repeated"][0]["copies"] >= 2
    sources = {
        r["doc_id"]: r["source"]
        for r in pq.read_table(out / layout.SURVIVORS, columns=["doc_id", "source"]).to_pylist()
    }
    page = (out / "report.html").read_text()
    section = page[
        page.index("<h2>Repeated spans</h2>") :
    ]  # report.html's spans section: the oracle's bytes per source
    for source in set(sources.values()):
        cut = sum(
            len(t.encode("utf-8")) - len(oracle_text(t, expected[d]).encode("utf-8"))
            for d, t in survivors
            if d in expected and sources[d] == source
        )
        assert f'<tr><td>{source}</td><td class="n">{cut:,}</td>' in section, source

    from pipeline.cli.commands import main  # explain and sample --spans show what was cut (docs/spans.md)

    doc_id = min(expected, key=lambda d: (d in emptied, d))
    start, end = expected[doc_id][0]
    before = dict(survivors)[doc_id].encode("utf-8")
    capsys.readouterr()
    assert main(["explain", str(out), str(doc_id)]) == 0
    shown = capsys.readouterr().out
    assert "spans stage: passed on" in shown
    span = " ".join(before[start:end].decode("utf-8", "replace").split())
    assert f"[-{span[:60]}" in " ".join(shown.split())
    assert main(["sample", str(out), "--spans", "2"]) == 0
    drawn = capsys.readouterr().out
    assert drawn.count("    before: ") == 2 and drawn.count("    after:  ") == 2 and "[-" in drawn


def test_a_run_with_both_parts_keeps_what_datatrove_keeps_and_accounts_for_every_document(spark, tmp_path, monkeypatch):
    """Sentences (equal to datatrove's SentenceDedup on dedup's survivors,
    tests/spark/spans/test_spans_sentences.py) then exact substrings (the suffix-array oracle on what the sentence
    part kept), in a whole run: documents left too short are a removal of their own in the accounting, and
    tokenize reads what the stage passed on."""
    from tests.spark.spans.test_spans_sentences import _datatrove

    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    text = (REPO / "conf" / "local.yaml").read_text()
    overrides = [
        f"output={out}",
        "spark.master=local[2]",
        f"spans.exact_substring.min_tokens={K}",
        "spans.sentences.span=2",
        "spans.sentences.min_doc_words=5",
        "spans.sentences.min_num_sentences=1",
    ]
    run_stages(RunContext(load_config_text(text, overrides), spark=spark), log=lambda _: None)
    survivors = [(r["doc_id"], r["text"]) for r in pq.read_table(out / layout.SURVIVORS).to_pylist()]
    after_sentences = _datatrove(survivors, tmp_path / "datatrove", 2, 5, 1)
    changed = [d for d, t in survivors if d in after_sentences and after_sentences[d] != t]
    print(f"sentence part: {len(changed)} changed, {len(survivors) - len(after_sentences)} removed")
    assert changed, "no repeated pair of sentences in the sample's survivors: nothing compared"
    expected = oracle_ranges(sorted(after_sentences.items()), K)
    want = {d: oracle_text(t, expected.get(d, [])) for d, t in after_sentences.items()}
    want = {d: t for d, t in want.items() if d not in expected or t.strip()}
    after = {r["doc_id"]: r["text"] for r in pq.read_table(out / layout.SPANS_DOCUMENTS).to_pylist()}
    assert after == want
    manifest = json.loads((out / "manifest.json").read_text())
    for source, row in manifest["accounting"].items():
        assert row["documents_read"] == row["rejected"] + sum(row["removed"].values()) + row["written"], source
        assert row["after_spans"] == row["survivors"] - row["spans_emptied"] - row["spans_too_short"], source
    too_short = sum(row["spans_too_short"] for row in manifest["accounting"].values())
    assert too_short == len(survivors) - len(after_sentences)
    written = sum(
        IndexedDataset(str(out / layout.MEGATRON / source)).num_documents for source in manifest["accounting"]
    )
    assert written == len(after)


def test_a_run_with_lines_drops_what_the_ccnet_oracle_drops_and_accounts_for_every_document(
    spark, tmp_path, monkeypatch
):
    """The line part alone (tests/spans_lines_oracle.py on dedup's survivors) in a whole run: documents left
    with nothing but whitespace are counted as spans_too_short, tokenize reads what the stage passed on and the
    report's bytes are the oracle's."""
    from tests.spans_lines_oracle import oracle_lines

    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    text = (REPO / "conf" / "local.yaml").read_text()
    overrides = [f"output={out}", "spark.master=local[2]", "spans.exact_substring=null", "spans.lines.min_repeats=2"]
    run_stages(RunContext(load_config_text(text, overrides), spark=spark), log=lambda _: None)
    survivors = [(r["doc_id"], r["text"]) for r in pq.read_table(out / layout.SURVIVORS).to_pylist()]
    kept, too_short, rows = oracle_lines(survivors, 2)
    print(f"line part: {len(rows)} changed, {len(too_short)} removed")
    assert rows, "no repeated line in the sample's survivors: nothing compared"
    after = {r["doc_id"]: r["text"] for r in pq.read_table(out / layout.SPANS_DOCUMENTS).to_pylist()}
    assert after == kept
    manifest = json.loads((out / "manifest.json").read_text())
    for source, row in manifest["accounting"].items():
        assert row["documents_read"] == row["rejected"] + sum(row["removed"].values()) + row["written"], source
        assert row["after_spans"] == row["survivors"] - row["spans_emptied"] - row["spans_too_short"], source
    assert sum(row["spans_too_short"] for row in manifest["accounting"].values()) == len(too_short)
    written = sum(
        IndexedDataset(str(out / layout.MEGATRON / source)).num_documents for source in manifest["accounting"]
    )
    assert written == len(after)
    report = json.loads((out / "report.json").read_text())
    cut = sum(e - s for doc_rows in rows.values() for s, e, *_ in doc_rows)
    assert sum(v["lines"] for v in report["spans"]["removed_bytes"].values()) == cut
