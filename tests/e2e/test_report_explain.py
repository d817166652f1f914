"""report.json, ``explain`` and ``sample`` on the sample run (issue #18), checked against facts the test
computes itself from the run's tables (read with pyarrow) and the texts (its own shingling)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.dataset as ds
import pytest
import xxhash

from pipeline.cli.commands import main

pytestmark = pytest.mark.spark
SCHEMA = Path(__file__).resolve().parents[2] / "pipeline" / "report" / "schema.json"


def table(run: Path, name: str) -> list[dict]:
    return ds.dataset(run / name, format="parquet", exclude_invalid_files=True).to_table().to_pylist()


def word_shingles(text: str, k: int) -> set[str]:
    """docs/dedup.md, Shingles, from its prose: lower-case word tokens (split on non-word characters),
    K-grams joined by spaces."""
    words = re.findall(r"\w+", text.lower())
    if len(words) <= k:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def jaccard(a: str, b: str, k: int = 5) -> float:
    sa, sb = word_shingles(a, k), word_shingles(b, k)
    return len(sa & sb) / len(sa | sb)


@pytest.fixture(scope="module")
def facts(local_reference_run: Path) -> dict:
    run = local_reference_run
    docs = {r["doc_id"]: r for r in table(run, "documents")}
    # the texts dedup compared: the filter stage's (as its filters left them) when the run filters
    compared = {
        r["doc_id"]: r["text"] for r in table(run, "filter/documents" if (run / "filter").is_dir() else "documents")
    }
    components = {r["doc_id"]: r for r in table(run, "dedup/components")}
    return {
        "run": run,
        "docs": docs,
        "compared": compared,
        "filtered": (run / "filter").is_dir(),
        "components": components,
        "edges": table(run, "dedup/edges"),
        "rejects": table(run, "rejects"),
        "survivors": {r["doc_id"] for r in table(run, "dedup/survivors")},
    }


def _run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_report_json_follows_its_schema_and_counts_what_the_tables_hold(facts):
    import jsonschema

    data = json.loads((facts["run"] / "report.json").read_text())
    jsonschema.validate(data, json.loads(SCHEMA.read_text()), cls=jsonschema.Draft202012Validator)
    removed = [r for r in facts["components"].values() if r["doc_id"] != r["survivor"]]
    s = data["summary"]
    assert s["documents_read"] == len(facts["docs"]) + len(facts["rejects"])
    assert s["rejected"] == len(facts["rejects"]) and s["duplicates_removed"] == len(removed)
    assert s["survivors"] == len(facts["survivors"])
    if facts["filtered"]:
        assert (
            sum(s["filtered"].values())
            == len(table(facts["run"], "filter/dropped"))
            == len(facts["docs"]) - len(facts["compared"])
        )
    assert s["survivor_ratio"] == pytest.approx(len(facts["survivors"]) / s["documents_read"], abs=1e-6)
    for source, row in data["sources"].items():
        assert row["survivors"] == sum(1 for i in facts["survivors"] if facts["docs"][i]["source"] == source)
    lsh = data["dedup"]["lsh"]
    hist = lsh["candidate_jaccard_histogram"]["counts"]
    kept_edges = [e for e in facts["edges"] if e["jaccard"] >= lsh["threshold"]]
    assert sum(hist) >= len(kept_edges) == data["dedup"]["counts"]["verified_edges"]
    assert sum(hist[int(lsh["threshold"] * len(hist)) :]) >= len(kept_edges)


def test_report_examples_are_true_survivor_member_pairs_with_their_exact_jaccard(facts):
    data = json.loads((facts["run"] / "report.json").read_text())
    near = [e for found in data["dedup"]["examples"].values() for e in found["near_duplicates"]]
    exact = [e for found in data["dedup"]["examples"].values() for e in found["exact_duplicates"]]
    assert near and exact
    for example in near:
        survivor, removed = example["survivor"]["doc_id"], example["removed"]["doc_id"]
        assert facts["components"][removed]["survivor"] == survivor != removed
        texts = facts["compared"][survivor], facts["compared"][removed]
        assert example["jaccard"] == pytest.approx(jaccard(*texts), abs=1e-6)
        assert facts["docs"][removed]["file"] == example["removed"]["file"]
    for group in exact:
        texts = {facts["compared"][c["doc_id"]] for c in group["copies"]}
        assert len(texts) == 1 and group["size"] == len(group["copies"]) >= 2
    rejects = {(s, reason) for s, reasons in data["rejects"]["examples"].items() for reason in reasons}
    assert rejects == {(r["source"], r["reason"]) for r in facts["rejects"]}


def test_report_json_flag_prints_the_machine_summary(facts, capsys):
    code, out, _ = _run_cli(["report", str(facts["run"]), "--json"], capsys)
    summary = json.loads(out)
    assert code == 0 and summary["summary"]["survivors"] == len(facts["survivors"])
    assert set(summary["sources"]) == {r["source"] for r in facts["docs"].values()}


def test_explain_a_removed_document_names_its_survivor_edges_and_shared_bands(facts, capsys):
    edges = facts["edges"]
    doc = next(
        e["src"] for e in sorted(edges, key=lambda e: e["src"]) if facts["components"][e["src"]]["survivor"] != e["src"]
    )
    code, out, _ = _run_cli(["explain", str(facts["run"]), str(doc), "--json"], capsys)
    info = json.loads(out)
    assert code == 0 and info["status"] == "removed"
    assert info["survivor"] == facts["components"][doc]["survivor"]
    assert info["cluster"] == facts["components"][doc]["component"]
    expected = {(e["dst"] if e["src"] == doc else e["src"]): e["jaccard"] for e in edges if doc in (e["src"], e["dst"])}
    assert {e["doc_id"]: e["jaccard"] for e in info["verified_edges"]} == expected
    for edge in info["verified_edges"]:
        texts = facts["compared"][doc], facts["compared"][edge["doc_id"]]
        assert edge["jaccard"] == pytest.approx(jaccard(*texts), abs=1e-9)
        assert edge["shared_bands"], "a candidate edge joins two documents that share at least one LSH band"
    assert info["path_to_survivor"][-1]["doc_id"] == info["survivor"]
    code, out, _ = _run_cli(["explain", str(facts["run"]), str(doc)], capsys)
    assert f"survivor {info['survivor']}" in out and "shared bands" in out


def test_explain_kept_and_rejected_and_unknown(facts, capsys):
    unique = min(i for i in facts["survivors"] if i not in facts["components"])
    code, out, _ = _run_cli(["explain", str(facts["run"]), str(unique), "--json"], capsys)
    assert code == 0 and json.loads(out)["status"] == "kept" and json.loads(out)["cluster"] is None
    survivor = next(r["survivor"] for r in facts["components"].values() if r["doc_id"] != r["survivor"])
    code, out, _ = _run_cli(["explain", str(facts["run"]), str(survivor), "--json"], capsys)
    assert json.loads(out)["status"] == "kept" and json.loads(out)["survivor"] == survivor
    reject = facts["rejects"][0]
    value = xxhash.xxh64_intdigest(f"{reject['source']}\x1f{reject['file']}\x1f{reject['position']}".encode())
    reject_id = value - (1 << 64) if value >= (1 << 63) else value
    code, out, _ = _run_cli(["explain", str(facts["run"]), str(reject_id), "--json"], capsys)
    info = json.loads(out)
    assert info["status"] == "rejected" and info["reason"] == reject["reason"] and info["file"] == reject["file"]
    code, out, err = _run_cli(["explain", str(facts["run"]), "12345"], capsys)
    assert code == 1 and out == "" and err.startswith("error: doc_id 12345 is neither")


def test_sample_draws_reproducible_records_of_the_asked_kind(facts, capsys):
    run = str(facts["run"])
    code, out, _ = _run_cli(["sample", run, "--removed", "5", "--seed", "7", "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 5 and len({r["doc_id"] for r in rows}) == 5
    dropped = {r["doc_id"]: r["reason"] for r in table(facts["run"], "filter/dropped")} if facts["filtered"] else {}
    for row in rows:
        if row["doc_id"] in dropped:  # removed by a filter: its rule, not a cluster
            assert row["reason"] == dropped[row["doc_id"]] and row["doc_id"] not in facts["components"]
        else:
            component = facts["components"][row["doc_id"]]
            assert component["survivor"] == row["survivor"] != row["doc_id"]
        doc = facts["docs"][row["doc_id"]]
        assert (row["source"], row["file"], row["position"]) == (doc["source"], doc["file"], doc["position"])
    assert _run_cli(["sample", run, "--removed", "5", "--seed", "7", "--json"], capsys)[1] == out
    assert _run_cli(["sample", run, "--removed", "5", "--seed", "8", "--json"], capsys)[1] != out
    _, out, _ = _run_cli(["sample", run, "--kept", "3", "--json"], capsys)
    assert all(json.loads(line)["doc_id"] in facts["survivors"] for line in out.splitlines())
    _, out, _ = _run_cli(["sample", run, "--rejected", "100"], capsys)
    assert sum(1 for line in out.splitlines() if line.startswith("rejected")) == len(facts["rejects"])


def test_report_on_an_incomplete_run_says_so(tmp_path, capsys):
    """A run killed after ingest: ``report`` writes what there is and says the run is incomplete (issue #28, 13)."""
    import json

    from pipeline.cli.commands import main

    run = tmp_path / "run"
    run.mkdir()
    manifest = {
        "config": {"sources": [{"name": "web"}]},
        "stages": {"ingest": {"seconds": 1.0, "finished": "2026-01-01T00:00:01Z", "counts": {"sources": {}}}},
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", str(run)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {run} is an incomplete run (finished: ingest)" in err
    assert json.loads((run / "report.json").read_text())["complete"] is False
    assert "<b>Incomplete run</b>" in (run / "report.html").read_text()
    assert main(["report", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["complete"] is False


def test_explain_shows_a_kept_documents_text_as_the_filter_stage_wrote_it(facts, capsys):
    """Issue 46: a document the filters rewrote (C4 drops lines, PII replaces addresses) was explained with its
    ingest text. The text shown is filter/documents' (the one dedup compared); its first 300 characters."""
    assert facts["filtered"]
    run, docs, compared = str(facts["run"]), facts["docs"], facts["compared"]
    rewritten = sorted(i for i in facts["survivors"] if compared[i][:300] != docs[i]["text"][:300])
    assert rewritten, "the sample run's filters rewrite the start of some kept document"
    for doc_id in rewritten[:3]:
        code, out, _ = _run_cli(["explain", run, str(doc_id), "--json"], capsys)
        info = json.loads(out)
        assert code == 0 and info["status"] == "kept" and info["text_of"] == "filter/documents"
        assert info["excerpt"].removesuffix(" …").rstrip() == compared[doc_id][:300].rstrip()
        code, out, _ = _run_cli(["explain", run, str(doc_id)], capsys)
        assert "text (as the filter stage wrote it): " + compared[doc_id][:40] in out


def test_sample_filtered_names_an_unknown_rule_and_lists_the_known_ones(facts, capsys):
    """Issue 46: ``sample --filtered nosuch`` printed nothing and exited 0. An unknown filter or rule is one line,
    exit code 2, listing the run's filters and rules (read here from filter/summary.json and filter/dropped)."""
    run = str(facts["run"])
    dropped = table(facts["run"], "filter/dropped")
    code, out, err = _run_cli(["sample", run, "--filtered", "nosuch"], capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("error: --filtered 'nosuch': no filter")
    summary = json.loads((facts["run"] / "filter" / "summary.json").read_text())
    for name in {e["name"] for entries in summary["filters"].values() for e in entries}:
        assert name in lines[0]
    for reason in {r["reason"] for r in dropped}:
        name, rule = reason.split(".", 1)
        assert re.search(rf"\b{name} \([^)]*\b{rule}\b", lines[0]), reason
    reason = dropped[0]["reason"]
    for known in (reason, reason.split(".")[0]):  # a rule, and its filter's name, still sample
        code, out, _ = _run_cli(["sample", run, "--filtered", known, "-n", "2", "--json"], capsys)
        assert code == 0 and out and all(json.loads(r)["reason"].startswith(known) for r in out.splitlines())
