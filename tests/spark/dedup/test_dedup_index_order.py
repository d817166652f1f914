"""The order of runs in a dedup index (docs/dedup_index.md, Order): a rerun of an earlier day after a later day
committed gets its first result again, and a run resumed after another run committed recomputes its dedup."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
import pytest

from pipeline.dedup.index.head import read_head
from pipeline.run.runner import run_stages
from tests.index_corpus import edit_one_word, random_doc, run, tree_digests, write_jsonl

pytestmark = pytest.mark.spark


def survivors(run_dir) -> set[str]:
    return {r["text"] for r in pq.read_table(run_dir / "dedup" / "survivors").to_pylist()}


@pytest.fixture(scope="module")
def three_days(spark, tmp_path_factory):
    """Day 1 and day 2: 20 new documents each; day 3: one-word edits of 8 day-2 documents and 12 new ones."""
    root = tmp_path_factory.mktemp("order")
    rng = random.Random(29)
    days = {1: [random_doc(rng) for _ in range(20)], 2: [random_doc(rng) for _ in range(20)]}
    days[3] = [edit_one_word(t, rng) for t in days[2][:8]] + [random_doc(rng) for _ in range(12)]
    index = root / "index"
    results = {}
    for day, texts in days.items():
        write_jsonl(root / "in" / f"day{day}.jsonl", texts)
        _, results[day] = run(spark, root / f"run-day{day}", root / "in" / f"day{day}.jsonl", index)
    return {"root": root, "index": index, "days": days, "results": results}


def test_a_later_day_removes_its_copies_of_an_earlier_day(three_days):
    counts = three_days["results"][3]["dedup"].counts
    assert counts["duplicates_of_earlier_runs"] == 8 and counts["survivors"] == 12
    assert counts["index_runs"] == sorted(str(three_days["root"] / f"run-day{d}") for d in (1, 2))
    head, _ = read_head(str(three_days["index"]))
    sequences = [head.runs[str(three_days["root"] / f"run-day{d}")]["sequence"] for d in (1, 2, 3)]
    assert sequences == sorted(sequences) and len(set(sequences)) == 3


def test_rerunning_an_earlier_day_after_a_later_one_keeps_what_it_kept(spark, three_days):
    """Day 3 holds edits of 8 day-2 documents (removed, still indexed): day 2 recomputed must not lose its
    originals to them, which would leave the 8 texts in neither day."""
    root, index = three_days["root"], three_days["index"]
    run2 = root / "run-day2"
    before = tree_digests(run2 / "megatron") | tree_digests(run2 / "blend")
    place_before = {k: v for k, v in read_head(str(index))[0].runs[str(run2)].items() if k in ("sequence", "committed")}
    ctx, _ = run(spark, run2, root / "in" / "day2.jsonl", index, only="ingest")
    results = run_stages(ctx, force="dedup", log=lambda *_: None)
    assert results["dedup"].counts["duplicates_of_earlier_runs"] == 0
    assert results["dedup"].counts["index_runs"] == [str(root / "run-day1")]
    assert survivors(run2) == set(three_days["days"][2])
    assert tree_digests(run2 / "megatron") | tree_digests(run2 / "blend") == before
    entry = read_head(str(index))[0].runs[str(run2)]
    assert {k: entry[k] for k in place_before} == place_before and "recommitted" in entry


def test_a_run_resumed_after_another_committed_recomputes_its_dedup(spark, three_days):
    """Day 4 stops after dedup; day 5, holding 6 documents that day 4 has edits of, commits; day 4 resumed must
    remove those 6 (each day kept them before), and says why it recomputed."""
    root, index, rng = three_days["root"], three_days["index"], random.Random(31)
    day5 = [random_doc(rng) for _ in range(15)]
    day4 = [edit_one_word(t, rng) for t in day5[:6]] + [random_doc(rng) for _ in range(14)]
    write_jsonl(root / "in" / "day4.jsonl", day4)
    write_jsonl(root / "in" / "day5.jsonl", day5)
    ctx4, _ = run(spark, root / "run-day4", root / "in" / "day4.jsonl", index, only="ingest")
    first = run_stages(ctx4, only="dedup", log=lambda *_: None)
    assert first["dedup"].counts["duplicates_of_earlier_runs"] == 0
    run(spark, root / "run-day5", root / "in" / "day5.jsonl", index)
    said: list[str] = []
    resumed = run_stages(ctx4, log=said.append)
    assert resumed["dedup"].counts["duplicates_of_earlier_runs"] == 6
    assert str(root / "run-day5") in resumed["dedup"].counts["index_runs"]
    assert any("gained 1 run(s)" in line and "run-day5" in line for line in said)
    assert survivors(root / "run-day4") == set(day4[6:])
    manifest = json.loads((root / "run-day4" / "manifest.json").read_text())
    assert manifest["accounting"]["web"]["duplicates_of_earlier_runs"] == 6
    again: list[str] = []
    run_stages(ctx4, log=again.append)  # committed now: nothing gained since, every stage reused
    assert any(line.startswith("[dedup] already finished") for line in again)
