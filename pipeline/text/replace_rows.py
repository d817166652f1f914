"""A string column with some rows replaced, built by copying byte ranges of its buffers (``pc.replace_with_mask``
gives the same array but copies row by row, which costs more than a filter that rewrites a few rows)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def replace_rows(column: pa.Array, rows: Sequence[int], texts: Sequence[str]) -> pa.Array:
    """``column`` (string or large string) with row ``rows[k]`` (ascending, not null) replaced by ``texts[k]``."""
    large = pa.types.is_large_string(column.type)
    if column.offset or not (large or pa.types.is_string(column.type)):
        where = np.zeros(len(column), dtype=bool)
        where[list(rows)] = True
        return pc.replace_with_mask(column, pa.array(where), pa.array(texts, column.type))
    kind = np.int64 if large else np.int32
    validity, offsets_buffer, data_buffer = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=kind, count=len(column) + 1).astype(np.int64)
    encoded = [text.encode("utf-8") for text in texts]
    lengths = np.diff(offsets)
    lengths[list(rows)] = [len(b) for b in encoded]
    new_offsets = np.zeros(len(column) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    if not large and new_offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError(f"replaced text column holds {new_offsets[-1]} bytes, more than a string array can")
    data = memoryview(data_buffer) if data_buffer is not None else memoryview(b"")
    pieces: list[bytes | memoryview] = []
    at = int(offsets[0])
    for row, new in zip(rows, encoded, strict=True):
        pieces.append(data[at : int(offsets[row])])
        pieces.append(new)
        at = int(offsets[row + 1])
    pieces.append(data[at : int(offsets[-1])])
    buffers = [validity, pa.py_buffer(new_offsets.astype(kind)), pa.py_buffer(b"".join(pieces))]
    return pa.Array.from_buffers(column.type, len(column), buffers, null_count=column.null_count)
