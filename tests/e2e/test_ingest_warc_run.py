"""A run from WARC files (real pages packed with warcio) to Megatron files on local Spark; five URLs are in both
files, so their earlier captures are older_capture removals in the accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from resiliparse.extract.html2text import extract_plain_text

from pipeline.cli.explain import explain, sample
from pipeline.config import load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext
from tests.oracles import require_oracle
from tests.warc_corpus import build_warc, html_pages

pytestmark = pytest.mark.spark


def test_warc_files_to_megatron_files(spark, tmp_path):
    MegatronDataset = require_oracle("megatron.core.datasets.indexed_dataset").IndexedDataset
    pages = html_pages(limit=120)
    built = [build_warc(pages[:60]), build_warc(pages[55:])]  # pages 55-59 captured twice
    src = tmp_path / "crawl"
    src.mkdir()
    for i, b in enumerate(built):
        (src / f"part-{i}.warc.gz").write_bytes(b.data)
    out = tmp_path / "run"
    text = f"""
output: {out}
sources:
  - name: web
    paths: ["{src}/*.warc.gz"]
    format: warc
ingest: {{split_bytes: 200000}}
tokenizer: {{train: true, vocab_size: 600, special_tokens: ["<|endoftext|>"]}}
tokenize: {{partitions: 2}}
"""
    ctx = RunContext(load_config_text(text, ["spark.master=local[2]"]), spark=spark)
    results = run_stages(ctx, log=lambda *_: None)
    ingest = results["ingest"].counts
    assert ingest["splits"] > 2
    row = ingest["sources"]["web"]
    skipped = sum(len(b.skipped) for b in built)
    assert row["documents_read"] == skipped + sum(len(b.pages) for b in built)
    assert row["rejects_by_reason"]["warc_request"] == 125
    twice = sum(bool(extract_plain_text(html, main_content=True).strip()) for _, html in pages[55:60])
    assert row["older_capture"] == twice == 5  # each page captured twice has text: one capture is removed
    manifest = json.loads((out / "manifest.json").read_text())
    acc = manifest["accounting"]["web"]
    assert acc["older_capture"] == 5
    removed = acc["duplicates_removed"] + acc["older_capture"]
    assert acc["documents_read"] == acc["rejected"] + removed + acc["survivors"]
    older = pq.read_table(str(out / "older_captures")).to_pylist()
    assert sorted(r["url"] for r in older) == sorted(p.url for p in built[1].pages[:5])
    info = explain(str(out), older[0]["doc_id"])  # a removed capture is explained, and drawn by sample
    assert (info["status"], info["removed_as"], info["file"]) == ("removed", "older_capture", older[0]["file"])
    assert info["evidence"]["kept_doc_id"] == older[0]["kept_doc_id"]
    drawn = sample(str(out), "removed", 10_000)
    assert {r["doc_id"] for r in drawn if r.get("reason") == "older_capture"} == {r["doc_id"] for r in older}
    ds = MegatronDataset(str(Path(out) / "megatron" / "web"))
    assert len(ds) == acc["survivors"] == acc["written"] > 100
