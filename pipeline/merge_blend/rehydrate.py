"""Rehydration in the merge-blend stage (docs/blending.md, Rehydration): a merged ``megatron/<source>`` dataset
rewritten so each document appears as many times as ``blend.rehydrate`` gives its cluster size.

The merged dataset holds the source's survivors in doc_id order (tokenize's range partitions, read in order);
dedup's ``cluster_sizes`` table (``dedup/cluster_sizes/``, a declared read of the stage) gives each survivor's
cluster size, so its rows of the source sorted by doc_id line up with the dataset's documents one to one.
A document's copies follow it, so the dataset stays in doc_id order.
"""

from __future__ import annotations

import numpy as np

from pipeline import storage
from pipeline.blend.rehydrate import copies_for
from pipeline.errors import PipelineError
from pipeline.megatron import IndexedDataset, IndexedDatasetWriter
from pipeline.megatron.format import idx_path
from pipeline.megatron.validate import validate
from pipeline.stage_api.run_tables import has_table

CHUNK_TOKENS = 1 << 20  # tokens read per step while rewriting (their copies' positions are int64)


def source_cluster_sizes(run_dir: str, table: str, source: str) -> np.ndarray:
    """The cluster sizes of ``source``'s survivors in doc_id order, from the run's ``table`` (dedup's
    ``cluster_sizes``)."""
    import pyarrow.dataset as ds

    if not has_table(run_dir, table):
        raise PipelineError(
            f"blend.rehydrate is set but {table}/ is missing: rerun the dedup stage with it "
            "(python -m pipeline run --force dedup)"
        )
    fs, inner = storage.resolve(storage.join(run_dir, *table.split("/")))
    rows = ds.dataset(inner, filesystem=fs, format="parquet", exclude_invalid_files=True).to_table(
        columns=["doc_id", "cluster_size"], filter=ds.field("source") == source
    )
    return rows.sort_by("doc_id").column("cluster_size").to_numpy().astype(np.int64)


def repeat_documents(prefix: str, copies: np.ndarray) -> None:
    """Rewrite the dataset at ``prefix`` with document ``i`` written ``copies[i]`` times in a row."""
    source = IndexedDataset(prefix)
    if len(copies) != len(source) or source.num_documents != len(source):
        raise PipelineError(
            f"{prefix}: {len(source)} sequences in {source.num_documents} documents, {len(copies)} cluster sizes"
        )
    lengths = source.sequence_lengths.astype(np.int64)
    reach = np.cumsum(lengths)
    with IndexedDatasetWriter(prefix, dtype=source.dtype, tmp_suffix=".rehydrate.tmp") as writer:
        start = 0
        while start < len(lengths):
            before = int(reach[start - 1]) if start else 0
            stop = max(start + 1, int(np.searchsorted(reach, before + CHUNK_TOKENS, side="right")))
            _write_chunk(writer, source, lengths[start:stop], copies[start:stop], start)
            start = stop


def _write_chunk(
    writer: IndexedDatasetWriter, source: IndexedDataset, lengths: np.ndarray, copies: np.ndarray, first: int
) -> None:
    """Documents ``first ..`` (their ``lengths``), each ``copies`` times, in one write."""
    flat = np.concatenate(source[first : first + len(lengths)])
    starts = np.cumsum(lengths) - lengths
    order = np.repeat(np.arange(len(lengths)), copies)  # the document of each written copy
    out_lengths = lengths[order]
    ends = np.cumsum(out_lengths)
    within = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - out_lengths, out_lengths)
    writer.add_documents(flat[np.repeat(starts[order], out_lengths) + within], ends)


def rehydrate_source(run_dir: str, table: str, source: str, counts: dict, rules: list[tuple[int, int]]) -> dict:
    """Put back ``source``'s duplicates in its merged dataset (``table``: dedup's cluster sizes); its counts with
    the copies added."""
    prefix = counts["prefix"]
    sizes = source_cluster_sizes(run_dir, table, source)
    if len(sizes) != counts["documents"]:
        raise PipelineError(
            f"source {source!r}: {table} holds {len(sizes)} survivors, {prefix} {counts['documents']} documents"
        )
    copies = copies_for(sizes, rules)
    added = int(copies.sum()) - counts["documents"]
    if added == 0:  # every document once: the merged dataset stays as it is
        return {
            **counts,
            "distinct_documents": counts["documents"],
            "distinct_tokens": counts["tokens"],
            "copies_added": 0,
        }
    repeat_documents(prefix, copies)
    report = validate(prefix)
    if report.documents != counts["documents"] + added:
        raise PipelineError(f"{prefix}: {report.documents} documents after rehydration, expected the copies")
    return {
        **counts,
        "documents": report.documents,
        "tokens": report.tokens,
        "bytes": report.bin_bytes,
        "idx_bytes": storage.size(idx_path(prefix)),
        "distinct_documents": counts["documents"],
        "distinct_tokens": counts["tokens"],
        "copies_added": added,
    }
