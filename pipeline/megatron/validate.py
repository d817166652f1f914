"""Check every invariant of a ``.bin``/``.idx`` pair (docs/indexed_dataset.md, Before training)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline import storage
from pipeline.megatron.format import IndexedDatasetError, bin_path, idx_path, sequence_pointers
from pipeline.megatron.reader import read_index


@dataclass(frozen=True)
class ValidationReport:
    """Counts of a dataset that passed :func:`validate`."""

    prefix: str
    dtype: str
    documents: int
    sequences: int
    tokens: int
    bin_bytes: int


def validate(prefix: str) -> ValidationReport:
    """Validate ``prefix.idx`` and ``prefix.bin``; raise :class:`IndexedDatasetError` naming the file.

    Checks: magic, version and dtype code; ``.idx`` size exactly as the header's counts imply;
    lengths non-negative; pointers equal to the running sum of ``lengths * itemsize``; document
    indices start at 0, never decrease and end at the sequence count; ``.bin`` size equals the
    total of the lengths times the item size.
    """
    idx, bin_ = idx_path(prefix), bin_path(prefix)
    header, lengths, pointers, docs = read_index(prefix, mmap=True)
    ifs, iinner = storage.resolve(idx)
    idx_size = ifs.size(iinner)
    if idx_size != header.expected_idx_size():
        raise IndexedDatasetError(
            f"{idx}: {idx_size} bytes, but the header's {header.sequence_count} sequences and "
            f"{header.document_index_count} document indices need {header.expected_idx_size()}"
        )
    if len(lengths) and int(lengths.min()) < 0:
        bad = int(np.argmax(lengths < 0))
        raise IndexedDatasetError(f"{idx}: sequence {bad} has negative length {int(lengths[bad])}")
    itemsize = header.dtype.itemsize
    expected_ptr = sequence_pointers(lengths, itemsize)
    if not np.array_equal(pointers, expected_ptr):
        bad = int(np.argmax(pointers != expected_ptr))
        raise IndexedDatasetError(
            f"{idx}: sequence {bad} pointer {int(pointers[bad])} != {int(expected_ptr[bad])} (running sum of lengths)"
        )
    if header.document_index_count == 0:
        raise IndexedDatasetError(f"{idx}: no document indices (must at least hold the leading 0)")
    if docs[0] != 0:
        raise IndexedDatasetError(f"{idx}: first document index is {int(docs[0])}, must be 0")
    if len(docs) > 1 and bool(np.any(np.diff(docs) < 0)):
        bad = int(np.argmax(np.diff(docs) < 0)) + 1
        raise IndexedDatasetError(f"{idx}: document indices decrease at position {bad}")
    if docs[-1] != header.sequence_count:
        raise IndexedDatasetError(
            f"{idx}: last document index {int(docs[-1])} != sequence count {header.sequence_count}"
        )
    tokens = int(lengths.sum(dtype=np.int64))
    bfs, binner = storage.resolve(bin_)
    if not bfs.exists(binner):
        raise IndexedDatasetError(f"{bin_}: data file missing")
    bin_size = bfs.size(binner)
    if bin_size != tokens * itemsize:
        raise IndexedDatasetError(
            f"{bin_}: {bin_size} bytes, but {idx} describes {tokens} {header.dtype.name} tokens "
            f"= {tokens * itemsize} bytes (truncated or mismatched pair)"
        )
    return ValidationReport(
        str(prefix), header.dtype.name, header.document_count, header.sequence_count, tokens, bin_size
    )
