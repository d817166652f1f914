"""A run from WARC files (real pages packed with warcio) to Megatron files on local Spark; five URLs are in both
files, so their earlier captures are older_capture removals in the accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from resiliparse.extract.html2text import extract_plain_text

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
    ds = MegatronDataset(str(Path(out) / "megatron" / "web"))
    assert len(ds) == acc["survivors"] == acc["written"] > 100
