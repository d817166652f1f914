"""Exact groups and candidate edges in one task: the numpy kernels against plain Python, and the one-task
plan against the distributed shuffles on the bundled sample (same tables, same counts)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.config import load_config_text
from pipeline.dedup.batches import CANDIDATE_EDGE, EXACT_MEMBER, candidate_batches
from pipeline.dedup.buckets import candidate_edges, exact_groups
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext

SAMPLE = Path(__file__).resolve().parents[3] / "pipeline" / "sample"


def _oracle_groups(h1, h2, rank_r, doc_id) -> dict[int, int]:
    groups = defaultdict(list)
    for i in range(len(doc_id)):
        groups[(int(h1[i]), int(h2[i]))].append((int(rank_r[i]), int(doc_id[i])))
    return {d: min(g)[1] for g in groups.values() if len(g) > 1 for _, d in g}


def _oracle_edges(doc_id, keys: list[list[int]]) -> set[tuple[int, int]]:
    buckets = defaultdict(list)
    for d, row in zip(doc_id.tolist(), keys, strict=True):
        for band, key in enumerate(row):
            buckets[(band, key)].append(d)
    return {(d, min(b)) for b in buckets.values() for d in b if d != min(b)}


@pytest.mark.parametrize("seed", range(5))
def test_exact_groups_match_plain_python(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    doc_id = rng.permutation(10 * n)[:n].astype(np.int64)
    h1 = rng.integers(0, 300, n).astype(np.int64)  # few distinct hashes: many groups, some of one
    h2 = rng.integers(0, 3, n).astype(np.int64)
    rank_r = rng.integers(-2, 2, n).astype(np.int64)  # ties broken by doc_id
    members, rep = exact_groups(h1, h2, rank_r, doc_id)
    found = dict(zip(doc_id[members].tolist(), rep.tolist(), strict=True))
    expected = _oracle_groups(h1, h2, rank_r, doc_id)
    assert len(found) == len(members) and found == expected
    assert 0 < len(expected) < n


@pytest.mark.parametrize("seed", range(5))
def test_candidate_edges_match_plain_python(seed):
    rng = np.random.default_rng(seed)
    n, bands = 1500, 7
    doc_id = rng.permutation(5 * n)[:n].astype(np.int64)
    keys = [rng.integers(0, 400, bands).tolist() for _ in range(n)]  # collisions in every band
    offsets = np.arange(0, (n + 1) * bands, bands, dtype=np.int64)
    src, dst = candidate_edges(doc_id, np.array(keys, dtype=np.int64).ravel(), offsets)
    pairs = list(zip(src.tolist(), dst.tolist(), strict=True))
    assert len(pairs) == len(set(pairs)), "edges must be distinct"
    assert set(pairs) == _oracle_edges(doc_id, keys) and pairs


def test_candidate_batches_leave_out_copies_and_short_documents():
    """Copies other than their representative and documents without keys give no edges."""
    rank = pa.StructArray.from_arrays([pa.array([0] * 6, pa.int32()), pa.array(range(6), pa.int64())], ["r", "doc_id"])
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(range(6), pa.int64()),
            pa.array([1, 1, 2, 3, 4, 4], pa.int64()),  # 0 and 1 one text; 4 and 5 another
            pa.array([0] * 6, pa.int64()),
            pa.array([[7, 8], [7, 8], [7, 9], [5, 9], None, None], pa.list_(pa.int64())),
            rank,
        ],
        names=["doc_id", "h1", "h2", "keys", "rank"],
    )
    rows = pa.Table.from_batches(list(candidate_batches([batch.slice(0, 4), batch.slice(4)], True))).to_pylist()
    members = {(r["doc_id"], r["other"], r["short"]) for r in rows if r["kind"] == EXACT_MEMBER}
    edges = {(r["doc_id"], r["other"]) for r in rows if r["kind"] == CANDIDATE_EDGE}
    assert members == {(0, 0, False), (1, 0, False), (4, 4, True), (5, 4, True)}
    assert edges == {(2, 0), (3, 2)}  # 1 is a copy of 0: not in the buckets
    without = pa.Table.from_batches(list(candidate_batches([batch], False))).to_pylist()
    assert {(r["doc_id"], r["other"]) for r in without} == {(1, 0), (2, 0), (3, 2)}
    assert all(r["kind"] == CANDIDATE_EDGE for r in without)


def _dedup(spark, out: Path, overrides: list[str]) -> tuple[dict, dict]:
    config = f"""
output: {out}
tokenizer: {{train: true}}
ingest: {{partitions: 3}}
sources:
  - {{name: web, paths: ["{SAMPLE}/web"], priority: 2}}
  - {{name: wiki, paths: ["{SAMPLE}/wiki/*.jsonl.gz"]}}
  - {{name: forum, paths: ["{SAMPLE}/forum/forum.parquet"], format: parquet, text_field: body}}
"""
    ctx = RunContext(load_config_text(config, overrides), spark=spark)
    run_stages(ctx, only="ingest")
    run_stages(ctx, only="dedup")
    read = lambda table: sorted(  # noqa: E731
        tuple(r) for r in spark.read.parquet(str(out / "dedup" / table)).collect()
    )
    tables = {t: read(t) for t in ("edges", "components", "survivors")}
    report = json.loads((out / "dedup" / "report.json").read_text())
    return tables, {k: v for k, v in report.items() if k != "seconds"}


@pytest.mark.spark
@pytest.mark.parametrize(
    "settings",
    [[], ["dedup.survivor=priority"], ["dedup.survivor=longest", "dedup.exact_prepass=false"]],
    ids=["min_id", "priority", "longest-no-prepass"],
)
def test_one_task_plan_gives_the_distributed_tables(spark, tmp_path, settings):
    one_task, one_report = _dedup(spark, tmp_path / "one", settings)
    shuffled, shuffled_report = _dedup(spark, tmp_path / "dist", [*settings, "dedup.local_buckets_max_rows=0"])
    assert one_report["counts"]["candidate_edges"] > 0 and one_report["counts"]["duplicates_removed"] > 0
    if "dedup.exact_prepass=false" not in settings:
        assert one_report["counts"]["exact_duplicates_removed"] > 0
    assert one_report == shuffled_report
    assert one_task == shuffled
