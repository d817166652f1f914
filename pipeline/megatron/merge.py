"""Merge IndexedDatasets: megatron-core's ``IndexedDatasetBuilder.add_index`` semantics, streamed.

The output is byte-identical to building with ``IndexedDatasetBuilder`` and calling ``add_index``
for every input in order, then ``finalize``. Memory holds the input indices' lengths and document
indices only (12 bytes per sequence at most); ``.bin`` bytes are copied in fixed-size chunks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.megatron.format import (
    IndexedDatasetError,
    IndexHeader,
    bin_path,
    idx_path,
    normalize_dtype,
    sequence_pointers,
)
from pipeline.megatron.reader import read_index

DEFAULT_CHUNK = storage.DEFAULT_CHUNK


@dataclass(frozen=True)
class MergeResult:
    """Counts of a merged dataset."""

    prefix: str
    inputs: int
    documents: int
    sequences: int
    tokens: int
    bin_bytes: int


def _progress(total: int, enabled: bool | None, desc: str) -> Any:
    """A tqdm bar of bytes: ``None`` on a terminal only (tqdm's ``disable=None``), ``True`` always, ``False`` none."""
    if enabled is False:
        return None
    from tqdm.auto import tqdm

    return tqdm(
        total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, disable=None if enabled is None else False
    )


def merge_indexed_datasets(
    prefixes: Sequence[str],
    out_prefix: str,
    *,
    dtype: object | None = None,
    progress: bool | None = False,
    chunk_size: int = DEFAULT_CHUNK,
    concat: Callable[..., int] = storage.concat,
) -> MergeResult:
    """Concatenate the datasets at ``prefixes`` (in the given order) into ``out_prefix``.

    All inputs must share one dtype (``dtype``, if given, must match too; it is required when
    ``prefixes`` is empty). Zero-document inputs are accepted. Each input's ``.bin`` size is
    checked against its index before any byte is copied. ``.bin`` is written first and ``.idx``
    last; on failure both partial outputs are removed. ``progress=True`` shows a tqdm bar of bytes.
    """
    prefixes = [str(p) for p in prefixes]
    want = normalize_dtype(dtype) if dtype is not None else None
    if not prefixes and want is None:
        raise ValueError("merge_indexed_datasets: no inputs; pass dtype= to write an empty dataset")

    lengths_list: list[np.ndarray] = []
    docs_list: list[np.ndarray] = []
    bin_sizes: list[int] = []
    for prefix in prefixes:
        header, lengths, _, doc_indices = read_index(prefix, mmap=False)
        if want is None:
            want = header.dtype
        elif header.dtype != want:
            raise IndexedDatasetError(
                f"{idx_path(prefix)}: dtype {header.dtype.name} differs from {want.name} "
                f"(of {prefixes[0] if dtype is None else 'the dtype argument'}); "
                "all inputs must share a dtype"
            )
        if len(doc_indices) == 0 or doc_indices[0] != 0 or doc_indices[-1] != len(lengths):
            raise IndexedDatasetError(f"{idx_path(prefix)}: document indices do not span the sequences")
        expected = int(lengths.sum(dtype=np.int64)) * header.dtype.itemsize
        bfs, binner = storage.resolve(bin_path(prefix))
        actual = bfs.size(binner)
        if actual != expected:
            raise IndexedDatasetError(
                f"{bin_path(prefix)}: {actual} bytes, its index says {expected}; truncated or mismatched"
            )
        lengths_list.append(np.array(lengths, dtype="<i4"))
        docs_list.append(np.array(doc_indices[1:], dtype="<i8"))
        bin_sizes.append(expected)
    assert want is not None

    total_bytes = sum(bin_sizes)
    bar = _progress(total_bytes, progress, f"merge {os.path.basename(out_prefix)}")
    out_bin, out_idx = bin_path(out_prefix), idx_path(out_prefix)
    try:
        written = concat(
            [bin_path(p) for p in prefixes],
            out_bin,
            chunk_size=chunk_size,
            on_bytes=bar.update if bar is not None else None,
        )
        if written != total_bytes:
            raise IndexedDatasetError(f"{out_bin}: wrote {written} bytes, expected {total_bytes}")
        n_seq = sum(len(x) for x in lengths_list)
        n_doc = sum(len(x) for x in docs_list)
        _write_index(out_idx, IndexHeader(want, n_seq, n_doc + 1), lengths_list, docs_list)
    except BaseException:
        storage.remove(out_bin, best_effort=True)
        storage.remove(out_idx, best_effort=True)
        raise
    finally:
        if bar is not None:
            bar.close()
    return MergeResult(out_prefix, len(prefixes), n_doc, n_seq, total_bytes // want.itemsize, total_bytes)


def _write_index(path: str, header: IndexHeader, lengths_list: list[np.ndarray], docs_list: list[np.ndarray]) -> None:
    """Write the merged ``.idx`` section by section, one input at a time."""
    fs, inner = storage.resolve(path)
    itemsize = header.dtype.itemsize
    with fs.open(inner, "wb") as f:
        f.write(header.pack())
        for lengths in lengths_list:
            f.write(lengths.tobytes())
        base = 0
        for lengths in lengths_list:
            f.write(sequence_pointers(lengths, itemsize, base).tobytes())
            base += int(lengths.sum(dtype=np.int64)) * itemsize
        f.write(np.zeros(1, dtype="<i8").tobytes())
        offset = 0
        for lengths, docs in zip(lengths_list, docs_list, strict=True):
            f.write((docs + offset).astype("<i8", copy=False).tobytes())
            offset += len(lengths)


__all__ = ["MergeResult", "merge_indexed_datasets"]
