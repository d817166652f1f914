"""Scheduled runs with a dedup index (issue #17): day 2 loses what day 1 kept, day 1 never changes,
a rerun replaces its own generation, a killed commit adds nothing, other MinHash parameters are refused."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
import pytest

from pipeline.dedup.index.head import IndexParameterError, read_head
from pipeline.dedup.index.spark.commit import describe
from pipeline.megatron import IndexedDataset
from tests.index_corpus import edit_one_word, exact_jaccard, random_doc, run, tree_digests, write_jsonl

pytestmark = pytest.mark.spark


def index_rows(index) -> dict[str, list]:
    """Every live row of the index (as HEAD maps runs to generations), sorted, per table."""
    head, _ = read_head(str(index))
    out: dict[str, list] = {"bands": [], "docs": []}
    for run_dir, entry in head.runs.items():
        for table in out:
            path = index / "generations" / entry["generation"] / table
            rows = pq.read_table(path).to_pylist()
            out[table] += sorted(json.dumps(r, sort_keys=True) for r in rows if r["run"] == run_dir)
    return {k: sorted(v) for k, v in out.items()}


@pytest.fixture(scope="module")
def days(spark, tmp_path_factory):
    """Day 1: 60 documents. Day 2: 10 exact repeats and 10 one-word edits of day-1 documents, a second
    edit of one of them, and 40 new documents."""
    root = tmp_path_factory.mktemp("days")
    rng = random.Random(17)
    day1 = [random_doc(rng) for _ in range(60)]
    repeats, edits = day1[:10], [edit_one_word(t, rng) for t in day1[10:20]]
    fresh = [random_doc(rng) for _ in range(40)]
    day2 = repeats + edits + [edit_one_word(day1[10], rng)] + fresh
    rng.shuffle(day2)
    write_jsonl(root / "in" / "day1.jsonl", day1)
    write_jsonl(root / "in" / "day2.jsonl", day2)
    index = root / "index"
    run(spark, root / "run-day1", root / "in" / "day1.jsonl", index)
    day1_files = tree_digests(root / "run-day1")
    head_after_day1 = (index / "HEAD.json").read_bytes()
    _, results = run(spark, root / "run-day2", root / "in" / "day2.jsonl", index)
    return {
        "root": root,
        "index": index,
        "day1": day1,
        "day2": day2,
        "fresh": fresh,
        "edits": edits,
        "day1_files": day1_files,
        "results": results,
        "head_after_day1": head_after_day1,
    }


def test_day2_removes_and_counts_what_day1_kept(days):
    assert all(exact_jaccard(e, o) >= 0.7 for e, o in zip(days["edits"], days["day1"][10:20], strict=True))
    counts = days["results"]["dedup"].counts
    assert counts["duplicates_of_earlier_runs"] == 20  # 10 repeats + 10 edited (one cluster of two edits)
    assert counts["duplicates_removed"] == 1  # the second edit of day1[10], a duplicate within day 2
    assert counts["survivors"] == 40
    run2 = days["root"] / "run-day2"
    manifest = json.loads((run2 / "manifest.json").read_text())
    row = manifest["accounting"]["web"]
    assert row["duplicates_of_earlier_runs"] == 20 and row["written"] == 40
    assert row["documents_read"] == row["rejected"] + row["duplicates_removed"] + 20 + row["survivors"]
    assert (manifest["dedup_index"]["documents"], manifest["dedup_index"]["kept"]) == (61, 40)
    report = json.loads((run2 / "dedup" / "report.json").read_text())
    assert report["counts"]["sources"]["web"]["duplicates_of_earlier_runs"] == 20
    examples = report["earlier_runs"]["examples"]
    assert examples and all(e["index_run"].endswith("run-day1") for e in examples)
    kept = {r["text"] for r in pq.read_table(run2 / "dedup" / "survivors").to_pylist()}
    assert kept == set(days["fresh"])
    assert len(IndexedDataset(str(run2 / "megatron" / "web"))) == 40


def test_day1_outputs_are_untouched_and_the_index_holds_both_days(days):
    assert tree_digests(days["root"] / "run-day1") == days["day1_files"]
    head, _ = read_head(str(days["index"]))
    runs = {k.rsplit("/", 1)[-1]: (v["documents"], v["kept"]) for k, v in head.runs.items()}
    assert runs == {"run-day1": (60, 60), "run-day2": (61, 40)}  # every deduplicated document, removed ones too
    text = describe(str(days["index"]))
    assert "2 run(s), 121 documents" in text and "run-day2: 61 documents (40 kept)" in text


def test_rerun_of_day2_gives_the_same_outputs_and_the_same_index(spark, days):
    root, index = days["root"], days["index"]
    before_files = tree_digests(root / "run-day2" / "megatron") | tree_digests(root / "run-day2" / "blend")
    before_rows = index_rows(index)
    ctx, results = run(spark, root / "run-day2", root / "in" / "day2.jsonl", index)  # resumed: stages reused
    from pipeline.run.runner import run_stages

    run_stages(ctx, force="dedup", log=lambda *_: None)  # and recomputed from dedup on
    after_files = tree_digests(root / "run-day2" / "megatron") | tree_digests(root / "run-day2" / "blend")
    assert after_files == before_files
    assert index_rows(index) == before_rows
    head, _ = read_head(str(index))
    assert len(head.runs) == 2 and len(head.generations) == 2  # replaced, never added twice
    assert len(list((index / "generations").iterdir())) == 2  # the replaced generations were deleted


def test_a_run_killed_before_its_commit_leaves_the_index_unchanged(spark, days, monkeypatch):
    import pipeline.dedup.index.spark.commit as commit

    root, index = days["root"], days["index"]
    write_jsonl(root / "in" / "day3.jsonl", [random_doc(random.Random(3)) for _ in range(20)])
    head_before = (index / "HEAD.json").read_bytes()
    rows_before = index_rows(index)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed before the conditional write of HEAD")

    monkeypatch.setattr(commit, "publish", killed)
    with pytest.raises(KeyboardInterrupt):
        run(spark, root / "run-day3", root / "in" / "day3.jsonl", index)
    assert (index / "HEAD.json").read_bytes() == head_before
    assert index_rows(index) == rows_before
    assert "unpublished generations" in describe(str(index))


@pytest.mark.parametrize(
    "override, key",
    [
        ("dedup.seed=2", "dedup.seed"),
        ("dedup.num_perm=128", "dedup.num_perm"),
        ("dedup.ngram=3", "dedup.ngram"),
        ("dedup.scheme=legacy", "dedup.scheme"),
    ],
)
def test_an_index_with_other_parameters_is_refused_naming_the_key(spark, days, override, key):
    root, index = days["root"], days["index"]
    head_before = (index / "HEAD.json").read_bytes()
    with pytest.raises(IndexParameterError, match=key):
        run(spark, root / f"run-other-{key}", root / "in" / "day2.jsonl", index, [override])
    assert (index / "HEAD.json").read_bytes() == head_before
    assert not (root / f"run-other-{key}" / "documents").exists()  # refused before ingest


def test_explain_and_sample_name_duplicates_of_earlier_runs(days):
    """A day-2 document removed for matching day 1 is explained and sampled as such (issue #28, 14)."""
    from pipeline.cli.explain import explain, sample

    run_dir = str(days["root"] / "run-day2")
    rows = pq.read_table(days["root"] / "run-day2" / "dedup" / "earlier_runs").to_pylist()
    assert rows
    for row in rows:
        info = explain(run_dir, row["doc_id"])
        assert (info["status"], info["removed_as"]) == ("removed", "duplicates_of_earlier_runs")
        assert info["evidence"]["index_doc_id"] == row["index_doc_id"]
    drawn = sample(run_dir, "removed", 1000)
    assert {r["doc_id"] for r in drawn if r.get("reason") == "duplicates_of_earlier_runs"} == {
        r["doc_id"] for r in rows
    }


def test_a_dedup_only_run_says_why_it_has_not_joined_the_index(spark, tmp_path):
    """``python -m pipeline dedup`` with ``dedup.index`` says in one line why nothing was committed (a run joins
    the index when its last stage has finished); the full run then commits once, and a rerun that reuses every
    stage does not commit again (issue #28, 5)."""
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext
    from tests.index_corpus import config

    rng = random.Random(5)
    write_jsonl(tmp_path / "in" / "a.jsonl", [random_doc(rng) for _ in range(20)])
    index, out = tmp_path / "index", tmp_path / "run"
    ctx = RunContext(config(out, tmp_path / "in" / "a.jsonl", index), spark=spark)
    messages: list[str] = []
    run_stages(ctx, only="ingest", log=messages.append)
    run_stages(ctx, only="dedup", log=messages.append)
    said = [m for m in messages if m.startswith("[index]")]
    assert len(said) == 1 and said[0].startswith(f"[index] not committed to {index} yet"), messages
    assert not (index / "HEAD.json").exists()
    messages.clear()
    run_stages(ctx, log=messages.append)
    assert [m for m in messages if m.startswith("[index]")][0].startswith("[index] 20 documents (20 kept)")
    generation = read_head(str(index))[0].runs[str(out)]["generation"]
    messages.clear()
    run_stages(ctx, log=messages.append)
    assert not any(m.startswith("[index]") for m in messages), messages
    assert read_head(str(index))[0].runs[str(out)]["generation"] == generation
