"""Ingest on local Spark: every reject reason lands in rejects/, ids don't depend on partitioning."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from pipeline.config import load_config_text
from pipeline.ingest.stage import DocIdCollisionError, documents_per_source
from pipeline.run.runner import run_stages
from pipeline.sources.records import record_rules
from pipeline.sources.spark.reader import read_records
from pipeline.sources.splits import Split
from pipeline.spark.task_numbers import task_numbers
from pipeline.stage_api.context import RunContext

pytestmark = pytest.mark.spark

GOOD = [f"document {i} talks about topic {i % 7} at some length" for i in range(40)]
BAD = {
    b'{"text": "unterminated': "malformed_json",
    b'{"title": "no text"}': "missing_text_field",
    b'{"text": 17}': "non_string_text",
    b'{"text": "bad \xff byte"}': "invalid_utf8",
    b'{"text": ""}': "empty_text",
    b'{"text": "' + b"y" * 300 + b'"}': "text_too_large",
}


def _jsonl(texts) -> bytes:
    return b"".join(json.dumps({"text": t, "url": f"u{i}"}).encode() + b"\n" for i, t in enumerate(texts))


@pytest.fixture()
def corpus(tmp_path):
    raw = tmp_path / "raw"
    (raw / "web").mkdir(parents=True)
    (raw / "web" / "a.jsonl").write_bytes(_jsonl(GOOD[:20]) + b"\n".join(BAD) + b"\n")
    (raw / "web" / "b.jsonl.gz").write_bytes(gzip.compress(_jsonl(GOOD[20:30])))
    (raw / "web" / "c.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(_jsonl(GOOD[30:])))
    (raw / "web" / "broken.jsonl.gz").write_bytes(gzip.compress(_jsonl(GOOD[:3]))[:-12])
    (raw / "books").mkdir()
    (raw / "books" / "one.txt").write_text("a whole book in one file\nwith two lines\n")
    (raw / "books" / "two.txt").write_text("another book\n")
    (raw / "forum").mkdir()
    pq.write_table(
        pa.table({"body": ["post one here", None, "post three"], "id": [1, 2, 3]}),
        raw / "forum" / "f.parquet",
        row_group_size=1,
    )
    return raw


def _config(raw, out, extra=""):
    return load_config_text(f"""
output: {out}
tokenizer: {{train: true}}
ingest: {{max_text_bytes: 200{extra}}}
sources:
  - {{name: web, paths: ["{raw}/web"], keep_fields: [url]}}
  - {{name: books, paths: ["{raw}/books/*.txt"], format: text, text_unit: file}}
  - {{name: forum, paths: ["{raw}/forum"], format: parquet, text_field: body}}
""")


def test_rejects_documents_and_accounting(spark, corpus, tmp_path):
    ctx = RunContext(_config(corpus, tmp_path / "run"), spark=spark)
    counts = run_stages(ctx, only="ingest")["ingest"].counts["sources"]
    rejects = spark.read.parquet(str(tmp_path / "run" / "rejects")).toPandas()
    docs = spark.read.parquet(str(tmp_path / "run" / "documents")).toPandas()
    web_rejects = rejects[rejects.source == "web"]
    assert sorted(web_rejects.reason) == sorted([*BAD.values(), "unreadable_file"])
    assert (web_rejects.excerpt.str.len() <= 200).all()
    assert set(docs[docs.source == "web"].text) >= set(GOOD)
    assert sorted(docs[docs.source == "books"].text) == ["a whole book in one file\nwith two lines\n", "another book\n"]
    assert sorted(docs[docs.source == "forum"].text) == ["post one here", "post three"]
    assert list(rejects[rejects.source == "forum"].reason) == ["missing_text_field"]
    for name, c in counts.items():
        assert c["documents_read"] == c["documents"] + c["rejected"]
        assert c["documents"] == int((docs.source == name).sum())
        assert c["rejected"] == int((rejects.source == name).sum())
    assert counts["web"]["rejects_by_reason"]["malformed_json"] == 1
    assert docs.doc_id.is_unique
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["stages"]["ingest"]["counts"]["sources"] == counts


def test_doc_ids_do_not_depend_on_partitioning(spark, corpus, tmp_path):
    frames, rejects = [], []
    for parts in (1, 7):
        out = tmp_path / f"run{parts}"
        ctx = RunContext(_config(corpus, out, extra=f", partitions: {parts}"), spark=spark)
        counts = run_stages(ctx, only="ingest")["ingest"].counts
        assert counts["splits"] >= parts
        # rejects sit in 3 files (a.jsonl's tail, broken.jsonl.gz, f.parquet): the rejects pass reads no other split
        assert counts["splits_with_rejects"] == 3 < counts["splits"]
        frames.append(
            spark.read.parquet(str(out / "documents")).toPandas().sort_values("doc_id").reset_index(drop=True)
        )
        rejects.append(
            spark.read.parquet(str(out / "rejects")).toPandas().sort_values(["file", "position"]).reset_index(drop=True)
        )
    assert frames[0][["doc_id", "text"]].equals(frames[1][["doc_id", "text"]])
    assert len(rejects[0]) == len(BAD) + 2  # + the truncated gzip file, + the parquet row without a body
    assert rejects[0].equals(rejects[1])


def test_clean_input_writes_an_empty_rejects_table(spark, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.jsonl").write_bytes(_jsonl(GOOD))
    config = load_config_text(f"""
output: {tmp_path / "run"}
tokenizer: {{train: true}}
ingest: {{partitions: 3}}
sources:
  - {{name: web, paths: ["{raw}"]}}
""")
    counts = run_stages(RunContext(config, spark=spark), only="ingest")["ingest"].counts
    assert counts["splits"] == 3 and counts["splits_with_rejects"] == 0
    rejects = spark.read.parquet(str(tmp_path / "run" / "rejects"))
    assert rejects.columns == ["source", "file", "position", "reason", "detail", "excerpt"]
    assert rejects.count() == 0
    assert counts["sources"]["web"] == {
        "documents_read": len(GOOD),
        "rejected": 0,
        "documents": len(GOOD),
        "rejects_by_reason": {},
    }


def test_every_task_is_one_partition_in_order(spark, tmp_path):
    assert task_numbers(spark, 16).rdd.glom().map(len).collect() == [1] * 16
    assert task_numbers(spark, 0).count() == 0
    files = []
    for i in range(5):
        path = tmp_path / f"{i}.jsonl"
        path.write_bytes(_jsonl([f"file {i} line {j}" for j in range(i + 1)]))
        files.append(Split("web", "jsonl", str(path), path.name, 0, -1, None, path.stat().st_size))
    config = load_config_text(
        f"output: {tmp_path}/run\ntokenizer: {{train: true}}\nsources: [{{name: web, paths: ['{tmp_path}']}}]"
    )
    tasks = [[files[0], files[1]], [files[2]], [files[3], files[4]]]
    records = read_records(spark, tasks, record_rules(config.sources, config.ingest), "documents")
    per_partition = records.rdd.glom().map(lambda rows: [r["file"] for r in rows]).collect()
    assert per_partition == [["0.jsonl", "1.jsonl", "1.jsonl"], ["2.jsonl"] * 3, ["3.jsonl"] * 4 + ["4.jsonl"] * 5]


def test_a_repeated_doc_id_stops_the_stage_naming_both_records(spark):
    schema = "doc_id long, source string, file string, position long"
    clean = spark.createDataFrame([(1, "web", "a.jsonl", 0), (2, "web", "a.jsonl", 9), (3, "wiki", "w.txt", 0)], schema)
    assert sorted(documents_per_source(clean)) == [("web", None, 2), ("wiki", None, 1)]
    clash = spark.createDataFrame([(1, "web", "a.jsonl", 0), (1, "wiki", "w.txt", 7), (3, "wiki", "w.txt", 0)], schema)
    with pytest.raises(
        DocIdCollisionError, match=r"1: (web/a\.jsonl@0; 1: wiki/w\.txt@7|wiki/w\.txt@7; 1: web/a\.jsonl@0)"
    ):
        documents_per_source(clash)
