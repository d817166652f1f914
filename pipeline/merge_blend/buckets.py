"""Quality buckets in the merge-blend stage (docs/blending.md, Quality buckets): a source that ``blend.weights``
weighs by bucket has its merged dataset split into one Megatron dataset per bucket, ``megatron/<source>/bucket=<b>``.

The merged dataset holds the source's documents in doc_id order (rehydration's copies beside their document); the
table the tokenize stage read gives each one's ``quality_bucket``, so its rows of the source sorted by doc_id line up
with the dataset's documents. Each bucket's dataset keeps that order; the source's whole dataset is then removed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline import storage
from pipeline.blend.rehydrate import copies_for
from pipeline.blend.weights import bucket_dataset
from pipeline.errors import PipelineError
from pipeline.megatron import IndexedDataset, IndexedDatasetWriter
from pipeline.megatron.format import bin_path, idx_path
from pipeline.megatron.validate import validate
from pipeline.merge_blend.rehydrate import source_cluster_sizes
from pipeline.stage_api import layout

BUCKET_COLUMN = "quality_bucket"
CHUNK_DOCUMENTS = 4096  # documents gathered per write


def bucket_directory(run_dir: str, source: str) -> str:
    """``<run>/megatron/<source>``: the directory of a source's bucket datasets."""
    return storage.join(run_dir, layout.MEGATRON, source)


def source_buckets(run_dir: str, table: str, source: str) -> np.ndarray:
    """The ``quality_bucket`` of ``source``'s documents of ``table`` in doc_id order."""
    import pyarrow.dataset as ds

    fs, inner = storage.resolve(storage.join(run_dir, *table.split("/")))
    dataset = ds.dataset(inner, filesystem=fs, format="parquet", exclude_invalid_files=True)
    if BUCKET_COLUMN not in dataset.schema.names:
        raise PipelineError(
            f"blend.weights weighs {source!r} by quality bucket, but {table}/ has no {BUCKET_COLUMN} column: "
            "rerun the filter stage with the fasttext_classifier's buckets (python -m pipeline run --force filter)"
        )
    rows = dataset.to_table(columns=["doc_id", BUCKET_COLUMN], filter=ds.field("source") == source).sort_by("doc_id")
    column = rows.column(BUCKET_COLUMN)
    if column.null_count:
        raise PipelineError(f"source {source!r}: {column.null_count} documents of {table}/ have no {BUCKET_COLUMN}")
    return column.to_numpy().astype(np.int64)


def write_bucket(prefix: str, out: str, documents: np.ndarray) -> None:
    """Write ``documents`` (indices, rising) of the dataset at ``prefix`` as a new dataset at ``out``."""
    source = IndexedDataset(prefix)
    with IndexedDatasetWriter(out, dtype=source.dtype) as writer:
        for start in range(0, len(documents), CHUNK_DOCUMENTS):
            parts = [source[int(i)] for i in documents[start : start + CHUNK_DOCUMENTS]]
            writer.add_documents(np.concatenate(parts), np.cumsum([len(p) for p in parts]))


def split_source(
    run_dir: str, table: str, source: str, counts: dict, buckets: int, rules, cluster_sizes: str | None = None
) -> dict:
    """Split ``source``'s merged dataset (``counts``: its merge counts) into its ``buckets`` quality buckets; the
    counts with a ``buckets`` entry per bucket dataset (``published`` false for an empty bucket). With the
    rehydration ``rules``, ``cluster_sizes`` is dedup's table of the survivors' cluster sizes."""
    prefix = counts["prefix"]
    of_document = source_buckets(run_dir, table, source)
    if rules is not None:  # rehydration wrote each document's copies beside it
        if cluster_sizes is None:
            raise PipelineError("blend.rehydrate is set: the split needs dedup's cluster sizes")
        of_document = np.repeat(of_document, copies_for(source_cluster_sizes(run_dir, cluster_sizes, source), rules))
    if len(of_document) != counts["documents"]:
        raise PipelineError(
            f"source {source!r}: {table}/ gives {len(of_document)} documents, {prefix} holds {counts['documents']}"
        )
    if len(of_document) and (of_document.min() < 0 or of_document.max() >= buckets):
        raise PipelineError(f"source {source!r}: a {BUCKET_COLUMN} outside 0..{buckets - 1} in {table}/")
    rows: dict[str, dict[str, Any]] = {}
    directory = bucket_directory(run_dir, source)
    storage.remove(directory)  # buckets of an earlier configuration (more buckets) must not linger
    storage.makedirs(directory)
    for bucket in range(buckets):
        name = bucket_dataset(source, bucket)
        out = storage.join(run_dir, layout.MEGATRON, *name.split("/"))
        storage.remove(idx_path(out), best_effort=True)
        storage.remove(bin_path(out), best_effort=True)
        members = np.flatnonzero(of_document == bucket)
        if len(members) == 0:
            rows[name] = {"published": False, "reason": "no documents in this bucket", "documents": 0, "tokens": 0}
            continue
        write_bucket(prefix, out, members)
        report = validate(out)
        if report.documents != len(members):
            raise PipelineError(f"{out}: {report.documents} documents written, {len(members)} in the bucket")
        rows[name] = {
            "published": True,
            "prefix": out,
            "documents": report.documents,
            "tokens": report.tokens,
            "bytes": report.bin_bytes,
        }
    if sum(r["tokens"] for r in rows.values()) != counts["tokens"]:
        raise PipelineError(f"source {source!r}: its buckets hold other tokens than {prefix}")
    storage.remove(idx_path(prefix), best_effort=True)  # .idx first: a half-removed pair is never "present"
    storage.remove(bin_path(prefix), best_effort=True)
    return {**counts, "buckets": rows}
