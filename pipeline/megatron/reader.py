"""Reader of an IndexedDataset: memory-mapped locally, ranged reads through fsspec elsewhere."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.megatron.format import HEADER_SIZE, IndexedDatasetError, IndexHeader, bin_path, idx_path, parse_header


def read_index(prefix: str, *, mmap: bool = True) -> tuple[IndexHeader, np.ndarray, np.ndarray, np.ndarray]:
    """``(header, lengths, pointers, document_indices)`` of ``prefix.idx``.

    Local files are memory-mapped (unless ``mmap=False``); remote ones are read whole (an index is
    12 bytes per sequence + 8 per document). Raises :class:`IndexedDatasetError` naming the file
    when the header is bad or the file is shorter than the header says.
    """
    path = idx_path(prefix)
    buf: Any
    if mmap and storage.is_local(path):  # no file system object: a stat and a map
        local = storage.local_path(path)
        if not os.path.isfile(local):
            raise FileNotFoundError(f"{path}: index file not found")
        buf = np.memmap(local, dtype=np.uint8, mode="r")
    else:
        fs, inner = storage.resolve(path)
        if not fs.exists(inner):
            raise FileNotFoundError(f"{path}: index file not found")
        buf = np.frombuffer(fs.cat_file(inner), dtype=np.uint8)
    header = parse_header(bytes(buf[:HEADER_SIZE]), path)
    if len(buf) < header.expected_idx_size():
        raise IndexedDatasetError(
            f"{path}: index truncated: {len(buf)} bytes, header promises {header.expected_idx_size()} "
            f"({header.sequence_count} sequences, {header.document_index_count} document indices)"
        )
    n, d = header.sequence_count, header.document_index_count
    off = HEADER_SIZE
    lengths = np.frombuffer(buf, dtype="<i4", count=n, offset=off)
    off += 4 * n
    pointers = np.frombuffer(buf, dtype="<i8", count=n, offset=off)
    off += 8 * n
    doc_indices = np.frombuffer(buf, dtype="<i8", count=d, offset=off)
    return header, lengths, pointers, doc_indices


class IndexedDataset:
    """Read-only view of ``prefix.bin``/``prefix.idx`` with Megatron's indexing semantics.

    ``ds[i]`` is sequence ``i`` as a numpy array of the dataset's dtype; ``ds[a:b]`` is a list of
    arrays (contiguous slices only); ``len(ds)`` is the sequence count; ``ds.document_indices``
    starts with 0 and has one entry per document more. Local ``.bin`` files are memory-mapped —
    except an empty one, which numpy cannot map (such a zero-document dataset is read without
    mmap). fsspec URLs are read with ranged reads, a file system being resolved per read.
    """

    def __init__(self, prefix: str, *, mmap: bool = True) -> None:
        self.prefix = str(prefix)
        header, self.sequence_lengths, self.sequence_pointers, self.document_indices = read_index(
            self.prefix, mmap=mmap
        )
        self.header = header
        self.dtype: np.dtype = header.dtype
        self._bin_path = bin_path(self.prefix)
        fs, inner = storage.resolve(self._bin_path)
        if not fs.exists(inner):
            raise FileNotFoundError(f"{self._bin_path}: data file not found")
        self._bin: np.ndarray | None = None
        if storage.is_local(self._bin_path):
            if fs.size(inner) == 0:
                self._bin = np.zeros(0, dtype=np.uint8)
            elif mmap:
                self._bin = np.memmap(inner, dtype=np.uint8, mode="r")

    def __len__(self) -> int:
        return int(self.header.sequence_count)

    @property
    def num_documents(self) -> int:
        """Number of documents."""
        return max(len(self.document_indices) - 1, 0)

    @property
    def num_tokens(self) -> int:
        """Total tokens over all sequences."""
        return int(self.sequence_lengths.sum(dtype=np.int64))

    def _read(self, offset: int, count: int) -> np.ndarray:
        nbytes = count * self.dtype.itemsize
        if count == 0:
            return np.zeros(0, dtype=self.dtype)
        if self._bin is not None:
            data = self._bin[offset : offset + nbytes]
        else:
            fs, inner = storage.resolve(self._bin_path)
            data = fs.cat_file(inner, start=offset, end=offset + nbytes)
        if len(data) != nbytes:
            raise IndexedDatasetError(
                f"{self._bin_path}: short read at byte {offset} ({len(data)} of {nbytes} bytes); truncated?"
            )
        return np.frombuffer(data, dtype=self.dtype, count=count)

    def get(self, idx: int, offset: int = 0, length: int | None = None) -> np.ndarray:
        """Tokens ``offset : offset + length`` of sequence ``idx`` (Megatron's ``get``)."""
        seq_len = int(self.sequence_lengths[idx])
        if length is None:
            length = seq_len - offset
        return self._read(int(self.sequence_pointers[idx]) + offset * self.dtype.itemsize, length)

    def __getitem__(self, idx: int | np.integer | slice) -> np.ndarray | list[np.ndarray]:
        if isinstance(idx, (int, np.integer)):
            n = len(self)
            i = int(idx) + n if idx < 0 else int(idx)
            if not 0 <= i < n:
                raise IndexError(f"sequence index {idx} out of range for {n} sequences")
            return self._read(int(self.sequence_pointers[i]), int(self.sequence_lengths[i]))
        if isinstance(idx, slice):
            start, stop, step = idx.indices(len(self))
            if step != 1:
                raise ValueError("slices into an IndexedDataset must be contiguous")
            if stop <= start:
                return []
            lengths = self.sequence_lengths[start:stop]
            flat = self._read(int(self.sequence_pointers[start]), int(lengths.sum(dtype=np.int64)))
            return np.split(flat, np.cumsum(lengths[:-1], dtype=np.int64))
        raise TypeError(f"unexpected index type {type(idx).__name__}")

    def document(self, doc: int) -> np.ndarray:
        """All tokens of document ``doc`` (its sequences concatenated)."""
        first, last = int(self.document_indices[doc]), int(self.document_indices[doc + 1])
        if last <= first:
            return np.zeros(0, dtype=self.dtype)
        start = int(self.sequence_pointers[first])
        return self._read(start, int(self.sequence_lengths[first:last].sum(dtype=np.int64)))

    def __iter__(self):  # type: ignore[no-untyped-def]
        for i in range(len(self)):
            yield self[i]
