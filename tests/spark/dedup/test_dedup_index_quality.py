"""A corpus split across two runs with a dedup index loses nothing against one run over the whole corpus
(issue #17): the same F1 against exact-Jaccard ground truth (within 0.005), and no true cluster wiped out."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from corpora.synthetic import documents
from pipeline.config import load_config_text
from pipeline.dedup.index.spark.commit import commit_run
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext
from tests.index_corpus import dedup_quality, true_clusters, write_jsonl

pytestmark = pytest.mark.spark
N_DOCS = 400

CONFIG = """
output: {out}
sources:
  - name: web
    paths: [{paths}]
tokenizer:
  train: true
"""


def _dedup(spark, out, paths, index=None) -> RunContext:
    overrides = [f"dedup.index={index}"] if index else []
    ctx = RunContext(load_config_text(CONFIG.format(out=out, paths=paths), overrides), spark=spark)
    run_stages(ctx, only="ingest", log=lambda *_: None)
    run_stages(ctx, only="dedup", log=lambda *_: None)
    return ctx


def _table(run, name) -> list[dict]:
    return pq.read_table(run / name).to_pylist()


@pytest.mark.same_plan  # the plans of test_dedup_index_runs.py's two runs on one index; only the corpus differs
def test_two_runs_with_an_index_match_one_run_over_the_whole_corpus(spark, tmp_path):
    texts = list(documents(N_DOCS, seed=11, dup_rate=0.25, exact_rate=0.05))
    write_jsonl(tmp_path / "in" / "day1.jsonl", texts[: N_DOCS // 2])
    write_jsonl(tmp_path / "in" / "day2.jsonl", texts[N_DOCS // 2 :])
    _dedup(spark, tmp_path / "whole", tmp_path / "in")
    day1 = _dedup(spark, tmp_path / "day1", tmp_path / "in" / "day1.jsonl", tmp_path / "index")
    commit_run(day1)
    _dedup(spark, tmp_path / "day2", tmp_path / "in" / "day2.jsonl", tmp_path / "index")

    docs = {r["doc_id"]: r["text"] for r in _table(tmp_path / "whole", "documents")}
    split_ids = {r["doc_id"] for day in ("day1", "day2") for r in _table(tmp_path / day, "documents")}
    assert split_ids == set(docs) and len(docs) == N_DOCS  # the same doc_ids in both set-ups
    clusters = true_clusters(docs, 0.7)
    assert sum(len(c) for c in clusters) > N_DOCS // 5  # the corpus really has duplicates, across both halves
    whole = {r["doc_id"] for r in _table(tmp_path / "whole", "dedup/survivors")}
    split = {r["doc_id"] for day in ("day1", "day2") for r in _table(tmp_path / day, "dedup/survivors")}
    one, two = dedup_quality(clusters, set(docs), whole), dedup_quality(clusters, set(docs), split)
    print(f"\none run: {one}\ntwo runs + index: {two}")
    assert abs(one["f1"] - two["f1"]) <= 0.005
    assert two["wiped_out"] == 0
    earlier = _table(tmp_path / "day2", "dedup/earlier_runs")
    day1_ids = {r["doc_id"] for r in _table(tmp_path / "day1", "documents")}
    assert earlier and all(r["index_doc_id"] in day1_ids for r in earlier)
