"""Dedup on local Spark against an in-process oracle (datasketch + networkx) built from docs/dedup.md."""

from __future__ import annotations

import hashlib
import json
import re
import struct
from collections import defaultdict
from pathlib import Path

import pytest

from pipeline.config import load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext
from tests.oracles import require_oracle

nx = require_oracle("networkx")
MinHash = require_oracle("datasketch").MinHash

pytestmark = pytest.mark.spark
SAMPLE = Path(__file__).resolve().parents[3] / "pipeline" / "sample"


def _config(out: Path, extra: str = "", raw: Path = SAMPLE) -> str:
    return f"""
output: {out}
tokenizer: {{train: true}}
ingest: {{partitions: 3}}
sources:
  - {{name: web, paths: ["{raw}/web"]}}
  - {{name: wiki, paths: ["{raw}/wiki/*.jsonl.gz"]}}
  - {{name: forum, paths: ["{raw}/forum/forum.parquet"], format: parquet, text_field: body}}
{extra}
"""


def _run(spark, out: Path, overrides=(), extra: str = "", raw: Path = SAMPLE):
    ctx = RunContext(load_config_text(_config(out, extra, raw), list(overrides)), spark=spark)
    if not (out / "_stages" / "ingest").exists():
        run_stages(ctx, only="ingest")
    return run_stages(ctx, only="dedup")["dedup"].counts


def _shingles(text: str, k: int) -> set[bytes]:
    toks = [t for t in re.split(r"\W+", text.lower()) if t]
    if not toks:
        return set()
    if len(toks) < k:
        return {" ".join(toks).encode()}
    return {" ".join(toks[i : i + k]).encode() for i in range(len(toks) - k + 1)}


def _sha1_32(b: bytes) -> int:
    return struct.unpack("<I", hashlib.sha1(b).digest()[:4])[0]


def oracle_survivors(
    docs: dict[int, str], k=5, num_perm=256, bands=25, rows=10, threshold=0.7, min_tokens=5
) -> set[int]:
    """docs/dedup.md written independently: exact pre-pass, datasketch signatures, star edges, verify, components."""
    graph = nx.Graph()
    graph.add_nodes_from(docs)
    by_text = defaultdict(list)  # the exact pre-pass covers every document, short ones too (issue 14)
    for d, t in docs.items():
        by_text[t].append(d)
    pool = {}
    for ids in by_text.values():
        rep = min(ids)
        if len([x for x in re.split(r"\W+", docs[rep].lower()) if x]) >= min_tokens:
            pool[rep] = docs[rep]
        graph.add_edges_from((d, rep) for d in ids if d != rep)
    shingles = {d: _shingles(t, k) for d, t in pool.items()}
    buckets = defaultdict(list)
    for d, sh in shingles.items():
        m = MinHash(num_perm=num_perm, seed=1, hashfunc=_sha1_32)
        for s in sh:
            m.update(s)
        for b in range(bands):
            buckets[(b, tuple(m.hashvalues[b * rows : (b + 1) * rows]))].append(d)
    for members in buckets.values():
        head = min(members)
        for d in members:
            if d != head:
                a, b = shingles[d], shingles[head]
                if len(a & b) / len(a | b) >= threshold:
                    graph.add_edge(d, head)
    return {min(c) for c in nx.connected_components(graph)}


def test_survivors_equal_the_oracle_and_accounting_holds(spark, tmp_path):
    counts = _run(spark, tmp_path / "run")
    docs = spark.read.parquet(str(tmp_path / "run" / "documents")).select("doc_id", "text").toPandas()
    survivors = spark.read.parquet(str(tmp_path / "run" / "dedup" / "survivors")).toPandas()
    expected = oracle_survivors(dict(zip(docs.doc_id, docs.text, strict=True)))
    assert set(survivors.doc_id) == expected
    assert counts["survivors"] == len(expected)
    assert counts["duplicates_removed"] == len(docs) - len(expected) > 0
    for entry in counts["sources"].values():
        assert entry["documents"] == entry["duplicates_removed"] + entry["survivors"]
    components = spark.read.parquet(str(tmp_path / "run" / "dedup" / "components")).toPandas()
    assert (components.groupby("component").doc_id.min() == components.groupby("component").component.first()).all()
    assert set(components.survivor) <= expected
    report = json.loads((tmp_path / "run" / "dedup" / "report.json").read_text())
    sizes = components.groupby("component").doc_id.count().sort_values(ascending=False, kind="stable")
    largest = sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [(c["component"], c["size"]) for c in report["largest_clusters"]] == largest
    for cluster in report["largest_clusters"]:
        members = sorted(components[components.component == cluster["component"]].doc_id)
        assert cluster["example_doc_ids"] == members[:5]
    checkpoints = Path(spark.sparkContext.getCheckpointDir().removeprefix("file:"))
    assert not list(checkpoints.iterdir()), "dedup must not leave checkpoint files behind"


def test_survivors_do_not_depend_on_partitioning(spark, tmp_path):
    first = _run(spark, tmp_path / "a", ["ingest.partitions=1"])
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    try:
        second = _run(spark, tmp_path / "b", ["ingest.partitions=6"])
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "4")
    read = lambda d: spark.read.parquet(str(tmp_path / d / "dedup" / "survivors")).toPandas()  # noqa: E731
    a, b = read("a"), read("b")
    assert sorted(a.doc_id) == sorted(b.doc_id)
    assert first["sources"] == second["sources"]


def test_short_documents_are_kept_and_counted(spark, tmp_path):
    raw = tmp_path / "raw"
    for name in ("web", "wiki", "forum"):
        (raw / name).mkdir(parents=True)
    lines = ['{"text": "hello there"}'] * 4 + ['{"text": "short one"}', '{"text": "tiny"}']
    long_text = " ".join(f"word{i}" for i in range(40))
    lines += [f'{{"text": "{long_text}"}}'] * 3
    (raw / "web" / "a.jsonl").write_text("\n".join(lines) + "\n")
    import gzip

    (raw / "wiki" / "w.jsonl.gz").write_bytes(gzip.compress(b'{"text": "a b"}\n'))
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"body": ["x y z"]}), raw / "forum" / "forum.parquet")
    counts = _run(spark, tmp_path / "run", raw=raw)
    assert counts["short_documents"] == 8
    assert counts["duplicates_removed"] == 3 + 2  # exact copies: 3 of "hello there" (short), 2 of the long text
    assert counts["short_exact_duplicates_removed"] == 3
    assert counts["survivors"] == 11 - 5
    survivors = spark.read.parquet(str(tmp_path / "run" / "dedup" / "survivors")).toPandas()
    assert sorted(survivors.text) == sorted(["hello there", "short one", "tiny", long_text, "a b", "x y z"])


def test_identical_one_line_files_are_exact_duplicates(spark, tmp_path):
    raw = tmp_path / "raw"
    for package in ("alpha", "beta", "gamma"):
        (raw / package).mkdir(parents=True)
        (raw / package / "__init__.py").write_text("from . import core\n")
    (raw / "alpha" / "core.py").write_text("VERSION = 1\n")
    (raw / "beta" / "core.py").write_text("VERSION = 2\n")
    ctx = RunContext(
        load_config_text(f"""
output: {tmp_path / "run"}
tokenizer: {{train: true}}
sources: [{{name: code, paths: ["{raw}/*/*.py"], format: text, text_unit: file}}]
"""),
        spark=spark,
    )
    run_stages(ctx, only="ingest")
    counts = run_stages(ctx, only="dedup")["dedup"].counts
    assert counts["short_documents"] == 5
    assert counts["exact_duplicates_removed"] == counts["short_exact_duplicates_removed"] == 2
    assert counts["sources"]["code"] == {"documents": 5, "duplicates_removed": 2, "survivors": 3}
    report = json.loads((tmp_path / "run" / "dedup" / "report.json").read_text())
    assert report["counts"]["short_exact_duplicates_removed"] == 2


def test_graphframes_engine_keeps_the_same_survivors_as_the_star_engine(graphframes_spark, tmp_path):
    spark = graphframes_spark
    distributed = ["dedup.local_components_max_edges=0"]  # the engines themselves, not the driver shortcut
    star = _run(spark, tmp_path / "star", distributed)
    graphframes = _run(spark, tmp_path / "gf", ["dedup.engine=graphframes", *distributed])
    read = lambda run, table: spark.read.parquet(str(tmp_path / run / "dedup" / table)).toPandas()  # noqa: E731
    star_survivors, gf_survivors = read("star", "survivors"), read("gf", "survivors")
    documents = spark.read.parquet(str(tmp_path / "star" / "documents")).count()
    assert len(star_survivors) < documents, "the sample has duplicates, or this comparison is vacuous"
    assert sorted(gf_survivors.doc_id) == sorted(star_survivors.doc_id)
    key = ["doc_id", "component"]
    star_components = read("star", "components")[key].sort_values("doc_id").reset_index(drop=True)
    gf_components = read("gf", "components")[key].sort_values("doc_id").reset_index(drop=True)
    assert len(star_components) > 0 and gf_components.equals(star_components)
    assert graphframes["sources"] == star["sources"]


def test_stage_refuses_a_missing_graphframes_jar_before_any_job(spark, tmp_path, monkeypatch):
    from pipeline.dedup.spark import graphframes as graphframes_engine

    ctx = RunContext(load_config_text(_config(tmp_path / "run"), ["dedup.engine=graphframes"]), spark=spark)
    run_stages(ctx, only="ingest")
    monkeypatch.setattr(graphframes_engine, "GRAPHFRAMES_CLASS", "org.graphframes.NoSuchGraphFrame")
    sc = spark.sparkContext
    sc.setJobGroup("graphframes-stage-check", "must stay empty")
    try:
        with pytest.raises(graphframes_engine.GraphFramesUnavailableError, match="graphframes-spark3_2.12"):
            run_stages(ctx, only="dedup")
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    assert list(sc.statusTracker().getJobIdsForGroup("graphframes-stage-check")) == []
    assert not (tmp_path / "run" / "dedup").exists()
