"""Megatron IndexedDataset kernel (docs/indexed_dataset.md): writer, reader, merge, validation, inspection.

Pure numpy + fsspec; no Spark, torch or megatron import (the Spark stage is ``stage.py``).
Byte-compatible with ``megatron.core.datasets.indexed_dataset`` (checked against 0.16.1).

Empty datasets: megatron-core's ``IndexedDataset(prefix)`` (default ``mmap=True``) cannot open a
zero-document dataset — numpy refuses to memory-map the empty ``.bin`` ("cannot mmap an empty
file"); ``IndexedDataset(prefix, mmap=False)`` opens it, and ``IndexedDatasetBuilder.add_index``
merges it. Our reader reads such a dataset without mmap and our merge accepts it; never hand an
empty dataset to training.
"""

from pipeline.megatron.describe import describe_dataset, document_lengths, length_histogram
from pipeline.megatron.format import (
    CODE_DTYPES,
    DTYPE_CODES,
    MAGIC,
    IndexedDatasetError,
    code_for_dtype,
    dtype_for_code,
    dtype_for_vocab,
)
from pipeline.megatron.merge import MergeResult, merge_indexed_datasets
from pipeline.megatron.reader import IndexedDataset, read_index
from pipeline.megatron.validate import ValidationReport, validate
from pipeline.megatron.writer import IndexedDatasetWriter, publish

__all__ = [
    "CODE_DTYPES",
    "DTYPE_CODES",
    "MAGIC",
    "IndexedDataset",
    "IndexedDatasetError",
    "IndexedDatasetWriter",
    "MergeResult",
    "ValidationReport",
    "code_for_dtype",
    "describe_dataset",
    "document_lengths",
    "dtype_for_code",
    "dtype_for_vocab",
    "length_histogram",
    "merge_indexed_datasets",
    "publish",
    "read_index",
    "validate",
]
