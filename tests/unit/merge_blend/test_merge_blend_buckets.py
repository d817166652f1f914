"""Splitting a merged source into its quality buckets (docs/blending.md, Quality buckets), without Spark: a merged
dataset, the table its documents were tokenized from (rows out of doc_id order) and, with rehydration, the cluster
sizes; each bucket's dataset is checked against the documents picked here by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.errors import PipelineError
from pipeline.megatron import IndexedDataset, IndexedDatasetWriter
from pipeline.merge_blend import buckets as buckets_module
from pipeline.merge_blend.buckets import split_source
from pipeline.stage_api import layout

TABLE = "dedup/survivors"
RULES = [(1, 1), (2, 2), (3, 3), (5, 1)]  # a cluster of 1 once, 2 twice, 3-4 three times, 5 and more once


def _copies(size: int) -> int:
    return {1: 1, 2: 2, 3: 3, 4: 3}.get(size, 1)


def _run(root: Path, rehydrated: bool) -> tuple[dict, list[np.ndarray], list[int], list[int]]:
    """A run directory: web's merged dataset (copies in place when ``rehydrated``), the survivors' table (and
    cluster sizes) with a second source mixed in, written shuffled. Returns the merge counts, the distinct
    documents, their buckets and their copies (doc_id order)."""
    rng = np.random.default_rng(44)
    n = 60
    doc_ids = sorted(rng.choice(10**9, size=n, replace=False).tolist())
    documents = [rng.integers(0, 60000, size=int(k)).astype(np.uint16) for k in rng.integers(1, 30, size=n)]
    buckets = rng.integers(0, 5, size=n).tolist()
    buckets[:5] = [0, 1, 2, 3, 4]
    buckets = [b if b != 2 else 3 for b in buckets]  # bucket 2 empty
    sizes = rng.integers(1, 7, size=n).tolist()
    copies = [_copies(s) if rehydrated else 1 for s in sizes]
    prefix = str(root / layout.MEGATRON / "web")
    (root / layout.MEGATRON).mkdir(parents=True)
    with IndexedDatasetWriter(prefix, dtype=np.uint16) as writer:
        for doc, c in zip(documents, copies, strict=True):
            for _ in range(c):
                writer.add_document(doc)
    order = rng.permutation(n + 10).tolist()
    rows = [{"doc_id": d, "source": "web", "quality_bucket": b} for d, b in zip(doc_ids, buckets, strict=True)]
    rows += [{"doc_id": int(d), "source": "wiki", "quality_bucket": 1} for d in rng.choice(10**9, size=10)]
    (root / TABLE).mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([rows[i] for i in order]), root / TABLE / "part-0.parquet")
    clusters = [{"doc_id": d, "source": "web", "cluster_size": s} for d, s in zip(doc_ids, sizes, strict=True)]
    (root / layout.CLUSTER_SIZES).mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(clusters[::-1]), root / layout.CLUSTER_SIZES / "part-0.parquet")
    written = sum(copies)
    tokens = sum(len(d) * c for d, c in zip(documents, copies, strict=True))
    counts = {"published": True, "prefix": prefix, "documents": written, "tokens": tokens}
    return counts, documents, buckets, copies


@pytest.mark.parametrize("rehydrated", [False, True])
def test_each_bucket_holds_its_documents_in_doc_id_order_with_their_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rehydrated: bool
) -> None:
    counts, documents, buckets, copies = _run(tmp_path, rehydrated)
    stale = tmp_path / layout.MEGATRON / "web" / "bucket=7.idx"  # from an earlier run with more buckets
    stale.parent.mkdir()
    stale.write_bytes(b"")
    monkeypatch.setattr(buckets_module, "CHUNK_DOCUMENTS", 7)  # many writes per bucket
    got = split_source(str(tmp_path), TABLE, "web", counts, 5, RULES if rehydrated else None, layout.CLUSTER_SIZES)
    for bucket in range(5):
        want = [d for d, b, c in zip(documents, buckets, copies, strict=True) if b == bucket for _ in range(c)]
        row = got["buckets"][f"web/bucket={bucket}"]
        prefix = tmp_path / layout.MEGATRON / "web" / f"bucket={bucket}"
        if not want:
            assert not row["published"] and not Path(f"{prefix}.idx").exists()
            continue
        dataset = IndexedDataset(str(prefix))
        assert row["documents"] == len(dataset) == len(want)
        assert all(np.array_equal(dataset[i], w) for i, w in enumerate(want))
    assert not (tmp_path / layout.MEGATRON / "web.idx").exists() and not stale.exists()
    assert not (tmp_path / layout.MEGATRON / "web.bin").exists()
    assert rehydrated == (sum(copies) > len(documents))


def test_a_table_without_the_bucket_column_says_to_rerun_the_filter(tmp_path: Path) -> None:
    counts, _, _, _ = _run(tmp_path, False)
    table = pq.read_table(tmp_path / TABLE / "part-0.parquet").drop(["quality_bucket"])
    pq.write_table(table, tmp_path / TABLE / "part-0.parquet")
    with pytest.raises(PipelineError, match="no quality_bucket column"):
        split_source(str(tmp_path), TABLE, "web", counts, 5, None)


def test_an_empty_bucket_is_left_out_of_the_blend_with_its_weight_and_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pipeline.config import load_config_text
    from pipeline.merge_blend.stage import blend_rows, left_out_buckets

    config = load_config_text(
        "output: /tmp/unused\ntokenizer: {train: true}\n"
        "sources: [{name: web, paths: [x.jsonl]}, {name: wiki, paths: [y.jsonl]}]\n"
        "classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}}\n"
        "filter: [{name: fasttext_classifier, model: run, score_label: hq, buckets: 3}]\n",
        ["blend.weights=1 web/bucket=0 2 web/bucket=1 4 web/bucket=2 3 wiki"],
    )
    bucket = {"published": True, "documents": 2, "tokens": 9}
    empty = {"published": False, "documents": 0, "tokens": 0}
    web = {"published": True, "documents": 4, "buckets": {"web/bucket=0": bucket, "web/bucket=1": empty,
                                                          "web/bucket=2": bucket}}  # fmt: skip
    merged = {"sources": {"web": web, "wiki": {"published": True, "documents": 3}}, "unpublished": []}
    rows = blend_rows(merged, config)
    assert list(rows) == ["web/bucket=0", "web/bucket=1", "web/bucket=2", "wiki"]
    assert [n for n, r in rows.items() if r["published"]] == ["web/bucket=0", "web/bucket=2", "wiki"]
    with caplog.at_level("WARNING", logger="pipeline"):
        assert left_out_buckets(config, rows, []) == [
            {"source": "web/bucket=1", "weight": 2.0, "why": "no documents in this bucket"}
        ]
    assert "'web/bucket=1'" in caplog.text
    # a source with no document at all: its own entry says so, not one per bucket
    gone = {"sources": {"web": {"published": False, "documents": 0}, "wiki": merged["sources"]["wiki"]}}
    assert left_out_buckets(config, blend_rows(gone, config), ["web"]) == []
