"""Conformance of pipeline.megatron against megatron-core 0.16.1 (the oracle; test extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.megatron import (
    DTYPE_CODES,
    IndexedDataset,
    IndexedDatasetWriter,
    dtype_for_vocab,
    merge_indexed_datasets,
)
from tests.oracles import require_oracle

mc = require_oracle("megatron.core.datasets.indexed_dataset")
torch = require_oracle("torch")


def _docs(rng: np.random.Generator, n: int, high: int, max_len: int = 40) -> list[list[int]]:
    return [rng.integers(0, high, size=int(rng.integers(1, max_len))).tolist() for _ in range(n)]


def _write_ours(prefix: Path, docs: list[list[int]], dtype: type) -> str:
    with IndexedDatasetWriter(str(prefix), dtype=dtype) as w:
        for d in docs:
            w.add_document(d)
    return str(prefix)


def _write_megatron(prefix: Path, docs: list[list[int]], dtype: type) -> str:
    b = mc.IndexedDatasetBuilder(f"{prefix}.bin", dtype=dtype)
    for d in docs:
        b.add_item(torch.tensor(d, dtype=torch.int64))
        b.end_document()
    b.finalize(f"{prefix}.idx")
    return str(prefix)


def _bytes(prefix: str) -> tuple[bytes, bytes]:
    return Path(f"{prefix}.bin").read_bytes(), Path(f"{prefix}.idx").read_bytes()


def test_dtype_codes_and_vocab_rule_match_megatron() -> None:
    assert DTYPE_CODES == {member.name: member.value for member in mc.DType}
    for vocab in (1, 256, 50257, 65499, 65500, 65536, 100277, 200019):
        assert dtype_for_vocab(vocab) == np.dtype(mc.DType.optimal_dtype(vocab))


@pytest.mark.parametrize(
    ("dtype", "high", "n_docs"),
    [(np.uint16, 65535, 50), (np.int32, 200_000, 50), (np.uint16, 50257, 1), (np.int32, 100_277, 1)],
)
def test_megatron_reads_our_files(tmp_path: Path, dtype: type, high: int, n_docs: int) -> None:
    docs = _docs(np.random.default_rng(n_docs + high), n_docs, high)
    if n_docs > 1:
        docs[3][0] = high  # the largest id must survive (no wraparound)
    ours = _write_ours(tmp_path / "ours", docs, dtype)
    ref = mc.IndexedDataset(ours)
    assert len(ref) == len(docs)
    assert ref.index.dtype == dtype
    np.testing.assert_array_equal(ref.document_indices, np.arange(len(docs) + 1))
    for i, d in enumerate(docs):
        np.testing.assert_array_equal(ref[i], np.array(d))
    # And byte-for-byte what megatron's own builder writes for the same documents.
    theirs = _write_megatron(tmp_path / "theirs", docs, dtype)
    assert _bytes(ours) == _bytes(theirs)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_empty_dataset_megatron_behaviour_and_ours(tmp_path: Path) -> None:
    ours = _write_ours(tmp_path / "empty", [], np.uint16)
    theirs = _write_megatron(tmp_path / "mc_empty", [], np.uint16)
    assert _bytes(ours) == _bytes(theirs)
    assert len(Path(f"{ours}.idx").read_bytes()) == 42 and Path(f"{ours}.bin").stat().st_size == 0
    # megatron-core's default (mmap=True) reader cannot open an empty .bin ...
    with pytest.raises(ValueError, match="cannot mmap an empty file"):
        mc.IndexedDataset(ours)  # (its __del__ then complains about the half-built object)
    # ... its mmap=False reader can, and so can ours (mmap is skipped for an empty .bin).
    no_mmap = mc.IndexedDataset(ours, mmap=False)
    assert len(no_mmap) == 0 and no_mmap.document_indices.tolist() == [0]
    ds = IndexedDataset(ours)
    assert len(ds) == 0 and ds.num_documents == 0 and ds.document_indices.tolist() == [0]
    assert ds[0:0] == []


def test_our_reader_reads_megatron_files_with_multi_sequence_documents(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    prefix = str(tmp_path / "mc")
    b = mc.IndexedDatasetBuilder(f"{prefix}.bin", dtype=np.int32)
    expected: list[np.ndarray] = []
    for _ in range(20):
        lengths = rng.integers(1, 9, size=int(rng.integers(1, 4))).tolist()
        tokens = rng.integers(0, 150_000, size=sum(lengths))
        b.add_document(tokens, lengths)
        expected.extend(np.split(tokens, np.cumsum(lengths)[:-1]))
    b.finalize(f"{prefix}.idx")
    ref = mc.IndexedDataset(prefix)
    ds = IndexedDataset(prefix)
    assert len(ds) == len(ref) == len(expected)
    assert ds.dtype == np.int32
    np.testing.assert_array_equal(ds.document_indices, ref.document_indices)
    np.testing.assert_array_equal(ds.sequence_lengths, ref.sequence_lengths)
    for i, seq in enumerate(expected):
        np.testing.assert_array_equal(ds[i], seq)
        np.testing.assert_array_equal(ds[i], ref[i])
    for got, want in zip(ds[3:11], ref[3:11], strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ds.get(5, offset=1, length=2), ref.get(5, offset=1, length=2))


@pytest.mark.parametrize(("dtype", "high"), [(np.uint16, 50257), (np.int32, 1_000_000)])
def test_merge_is_byte_identical_to_add_index(tmp_path: Path, dtype: type, high: int) -> None:
    rng = np.random.default_rng(high)
    shards = [
        _write_ours(tmp_path / f"part-{i:05d}", _docs(rng, n, high), dtype)
        for i, n in enumerate([5, 0, 1, 17, 0, 3])  # includes zero-document shards
    ]
    merge_indexed_datasets(shards, str(tmp_path / "ours"), progress=True, chunk_size=64)

    builder = mc.IndexedDatasetBuilder(str(tmp_path / "theirs.bin"), dtype=dtype)
    for shard in shards:
        builder.add_index(shard)
    builder.finalize(str(tmp_path / "theirs.idx"))
    assert _bytes(str(tmp_path / "ours")) == _bytes(str(tmp_path / "theirs"))

    ref = mc.IndexedDataset(str(tmp_path / "ours"))
    assert len(ref) == 26 and ref.document_indices[-1] == 26
