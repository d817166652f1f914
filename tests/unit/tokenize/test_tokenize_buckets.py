"""The tokenize stage's map and reduce bodies without Spark: row groups -> buckets -> shards, checked against each
document encoded alone and written in doc_id order by megatron-core's format writer of one document at a time."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.errors import PipelineError
from pipeline.megatron import IndexedDatasetWriter
from pipeline.storage.parquet_footers import table_footers
from pipeline.tokenize import batches
from pipeline.tokenize.batches import Buckets, TaskAttempt, bucket_documents, write_range_shard
from pipeline.tokenize.footers import plan_units
from pipeline.tokenize.tasks import read_unit
from pipeline.tokenizer import BPETokenizer, count_pretokens

EOT = "<|endoftext|>"
WORDS = ["the", "shard", "café", "日本語", "don't", "2024", "  ", "\n", "x", "order", "of", EOT]


def _rows(rng: random.Random, n: int) -> list[dict]:
    rows = []
    for _ in range(n):
        text = "".join(rng.choice(WORDS) + rng.choice([" ", "", "\n"]) for _ in range(rng.randint(0, 30)))
        rows.append(
            {"doc_id": rng.randrange(-(2**63), 2**63), "source": rng.choice(["web", "books", "other"]), "text": text}
        )
    rows[5]["text"] = None
    rows[6]["source"] = None
    return rows


@pytest.fixture(scope="module")
def tok() -> BPETokenizer:
    texts = [" ".join(WORDS)] * 3
    return BPETokenizer.train_from_counts(count_pretokens(texts, [EOT]), 300, [EOT])


def _range_oracle(doc_id: int, lowest: int, highest: int, parts: int) -> int:
    width = (float(highest) - float(lowest)) / parts
    return 0 if width <= 0 else min(max(math.floor((float(doc_id) - float(lowest)) / width), 0), parts - 1)


@pytest.mark.parametrize("flush", [None, 64])
def test_buckets_then_shards_equal_each_document_written_in_doc_id_order(tmp_path: Path, tok, monkeypatch, flush):
    if flush is not None:  # tiny buffers: a bucket in many record batches, written as they fill
        monkeypatch.setattr(batches, "FLUSH_BUCKET", flush)
        monkeypatch.setattr(batches, "FLUSH_TOTAL", 4 * flush)
    rng = random.Random(11)
    rows = _rows(rng, 400)
    table_dir = tmp_path / "table"
    table_dir.mkdir()
    schema = pa.schema([("doc_id", pa.int64()), ("source", pa.string()), ("text", pa.string())])
    for i in range(3):
        pq.write_table(pa.Table.from_pylist(rows[i::3], schema), table_dir / f"part-{i}.parquet", row_group_size=50)
    sources, parts, eod = ("web", "books", "empty"), 5, tok.token_id(EOT)
    spans = {
        s: (min(r["doc_id"] for r in rows if r["source"] == s), max(r["doc_id"] for r in rows if r["source"] == s))
        for s in ("web", "books")
    }
    plan = Buckets(sources, (spans["web"], spans["books"], None), parts, "uint16", eod, (EOT,))
    units = plan_units(table_footers(str(table_dir)), sources, parallelism=2)
    assert sorted(g for unit in units for _, groups in unit for g in groups) == sorted(
        g for i in range(3) for g in range(pq.ParquetFile(table_dir / f"part-{i}.parquet").metadata.num_row_groups)
    )
    found = [
        row
        for i, unit in enumerate(units)
        for row in bucket_documents(read_unit(unit), plan, tok, str(tmp_path / f"m{i}.arrow"))
    ]
    for source in ("web", "books"):
        mine = sorted((r for r in rows if r["source"] == source), key=lambda r: r["doc_id"])
        assert sum(f["documents"] for f in found if f["source"] == source) == len(mine)
        assert sum(f["special_text_documents"] for f in found if f["source"] == source) == sum(
            EOT in (r["text"] or "") for r in mine
        )
        for part in range(parts):
            expected = [r for r in mine if _range_oracle(r["doc_id"], *spans[source], parts) == part]
            inputs = [(f["path"], f["batches"]) for f in found if f["source"] == source and f["partition"] == part]
            task = TaskAttempt(part, 0, 1)
            row = write_range_shard(inputs, task, source, str(tmp_path / source), str(tmp_path / "tmp"), "uint16")
            assert row["documents"] == len(expected)
            if not expected:
                assert row["written"] is None
                continue
            oracle = tmp_path / "oracle" / f"{source}-{part}"
            with IndexedDatasetWriter(str(oracle)) as w:
                for r in expected:
                    w.add_document(tok.encode(r["text"] or "", split_special=False) + [eod])
            for ext in ("bin", "idx"):
                assert (tmp_path / source / f"part-{part:05d}.{ext}").read_bytes() == Path(
                    f"{oracle}.{ext}"
                ).read_bytes()
    assert not [f for f in found if f["source"] not in ("web", "books")]


def test_a_file_without_the_columns_names_itself(tmp_path: Path) -> None:
    pq.write_table(pa.table({"doc_id": [1], "text": ["a"]}), tmp_path / "part-0.parquet")
    with pytest.raises(PipelineError, match="part-0.parquet has no column source"):
        plan_units(table_footers(str(tmp_path)), ["web"], parallelism=2)


def test_row_groups_of_other_sources_are_not_read(tmp_path: Path) -> None:
    table = pa.table({"doc_id": [1, 2, 3, 4], "source": ["web", "web", "other", "other"], "text": ["a"] * 4})
    pq.write_table(table, tmp_path / "part-0.parquet", row_group_size=2)
    units = plan_units(table_footers(str(tmp_path)), ["web"], parallelism=2)
    assert [groups for unit in units for _, groups in unit] == [(0,)]


def test_an_id_that_does_not_fit_the_dtype_fails_the_map_task(tmp_path: Path, tok) -> None:
    batch = pa.RecordBatch.from_pylist([{"doc_id": 1, "source": "web", "text": "the"}])
    plan = Buckets(("web",), ((1, 1),), 1, "uint16", 70000, ())
    with pytest.raises(ValueError, match="token id 70000 does not fit uint16"):
        bucket_documents(iter([batch]), plan, tok, str(tmp_path / "m.arrow"))
