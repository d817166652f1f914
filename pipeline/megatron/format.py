"""On-disk format of Megatron's IndexedDataset ``.idx`` file (docs/indexed_dataset.md, The .idx file).

Layout (all little-endian), as written by ``megatron.core.datasets.indexed_dataset`` 0.16:

=========================  ===========================================================
``b"MMIDIDX\\x00\\x00"``     9-byte magic
``<Q``                     version, always 1
``<B``                     dtype code of the ``.bin`` tokens (see :data:`DTYPE_CODES`)
``<Q``                     sequence count ``S``
``<Q``                     document-index count ``D`` (= number of documents + 1)
``int32[S]``               sequence lengths, in tokens
``int64[S]``               sequence pointers, byte offsets into ``.bin``
``int64[D]``               document indices: 0, then the sequence index after each document
=========================  ===========================================================

Megatron's *multimodal* variant appends ``int8[S]`` sequence modes; this project never writes
them (plain text), exactly as megatron-core does when ``multimodal=False``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from pipeline.errors import PipelineError

MAGIC = b"MMIDIDX\x00\x00"
VERSION = 1
HEADER_SIZE = len(MAGIC) + 8 + 1 + 8 + 8  # 34 bytes

#: numpy dtype name -> Megatron dtype code.
DTYPE_CODES: dict[str, int] = {
    "uint8": 1,
    "int8": 2,
    "int16": 3,
    "int32": 4,
    "int64": 5,
    "float64": 6,
    "float32": 7,
    "uint16": 8,
}
CODE_DTYPES: dict[int, str] = {code: name for name, code in DTYPE_CODES.items()}


def bin_path(prefix: str) -> str:
    """``prefix + ".bin"``: the token data of a dataset."""
    return f"{prefix}.bin"


def idx_path(prefix: str) -> str:
    """``prefix + ".idx"``: the index of a dataset (written last: its presence means a complete pair)."""
    return f"{prefix}.idx"


#: preprocess_data.py's threshold: vocabularies below this size use uint16 tokens.
UINT16_VOCAB_LIMIT = 65500


class IndexedDatasetError(PipelineError, ValueError):
    """A ``.bin``/``.idx`` pair that is malformed or inconsistent; the message names the file."""


def dtype_for_vocab(vocab_size: int) -> np.dtype:
    """Token dtype for a vocabulary: uint16 below 65,500 ids, else int32 (as preprocess_data.py)."""
    if vocab_size <= 0:
        raise ValueError(f"vocab_size must be positive, got {vocab_size}")
    return np.dtype(np.uint16) if vocab_size < UINT16_VOCAB_LIMIT else np.dtype(np.int32)


def normalize_dtype(dtype: object) -> np.dtype:
    """The little-endian numpy dtype for a supported token dtype (type, dtype or name)."""
    dt = np.dtype(dtype)  # type: ignore[call-overload]
    if dt.name not in DTYPE_CODES:
        raise ValueError(f"unsupported token dtype {dt}; Megatron knows {sorted(DTYPE_CODES)}")
    little: np.dtype = dt.newbyteorder("<")
    return little


def code_for_dtype(dtype: object) -> int:
    """Megatron's dtype code for ``dtype``."""
    return DTYPE_CODES[normalize_dtype(dtype).name]


def dtype_for_code(code: int) -> np.dtype:
    """The little-endian numpy dtype for a Megatron dtype code."""
    if code not in CODE_DTYPES:
        raise ValueError(f"unknown Megatron dtype code {code}")
    little: np.dtype = np.dtype(CODE_DTYPES[code]).newbyteorder("<")
    return little


@dataclass(frozen=True)
class IndexHeader:
    """The fixed 34-byte header of an ``.idx`` file."""

    dtype: np.dtype
    sequence_count: int
    document_index_count: int

    @property
    def document_count(self) -> int:
        """Number of documents (the document-index array holds one more entry)."""
        return max(self.document_index_count - 1, 0)

    def expected_idx_size(self) -> int:
        """Exact size in bytes of a (non-multimodal) ``.idx`` file with this header."""
        return HEADER_SIZE + self.sequence_count * (4 + 8) + self.document_index_count * 8

    def pack(self) -> bytes:
        """The header bytes."""
        return (
            MAGIC
            + struct.pack("<Q", VERSION)
            + struct.pack("<B", code_for_dtype(self.dtype))
            + struct.pack("<Q", self.sequence_count)
            + struct.pack("<Q", self.document_index_count)
        )


def parse_header(data: bytes, path: str = "<idx>") -> IndexHeader:
    """Parse the first :data:`HEADER_SIZE` bytes of an ``.idx`` file; errors name ``path``."""
    if len(data) < HEADER_SIZE:
        raise IndexedDatasetError(f"{path}: index header truncated ({len(data)} < {HEADER_SIZE} bytes)")
    if data[: len(MAGIC)] != MAGIC:
        raise IndexedDatasetError(f"{path}: bad magic {data[: len(MAGIC)]!r}, expected {MAGIC!r}")
    (version,) = struct.unpack_from("<Q", data, 9)
    if version != VERSION:
        raise IndexedDatasetError(f"{path}: unsupported index version {version}, expected {VERSION}")
    (code,) = struct.unpack_from("<B", data, 17)
    if code not in CODE_DTYPES:
        raise IndexedDatasetError(f"{path}: unknown dtype code {code}")
    seq_count, doc_count = struct.unpack_from("<QQ", data, 18)
    return IndexHeader(dtype_for_code(code), int(seq_count), int(doc_count))


def sequence_pointers(lengths: np.ndarray, itemsize: int, start: int = 0) -> np.ndarray:
    """Byte offset of each sequence: ``start`` + exclusive cumulative sum of ``lengths * itemsize``."""
    pointers = np.empty(len(lengths), dtype=np.int64)
    if len(lengths):
        pointers[0] = start
        np.cumsum(lengths[:-1], dtype=np.int64, out=pointers[1:])
        pointers[1:] *= itemsize
        pointers[1:] += start
    return pointers


def pack_index(dtype: object, lengths: np.ndarray, document_indices: np.ndarray) -> bytes:
    """Complete ``.idx`` bytes for the given sequence lengths and document indices."""
    dt = normalize_dtype(dtype)
    lengths = np.asarray(lengths, dtype="<i4")
    header = IndexHeader(dt, len(lengths), len(document_indices))
    return b"".join(
        (
            header.pack(),
            lengths.tobytes(),
            sequence_pointers(lengths, dt.itemsize).astype("<i8", copy=False).tobytes(),
            np.asarray(document_indices, dtype="<i8").tobytes(),
        )
    )
