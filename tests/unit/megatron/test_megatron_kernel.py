"""Unit tests of pipeline.megatron without megatron-core: errors, fsspec, validate, describe."""

from __future__ import annotations

import struct
import uuid
from pathlib import Path

import fsspec
import numpy as np
import pytest

from pipeline import storage
from pipeline.megatron import (
    IndexedDataset,
    IndexedDatasetError,
    IndexedDatasetWriter,
    describe_dataset,
    merge_indexed_datasets,
    publish,
    validate,
)

DOCS = [[1, 2, 3], [65535], [7, 7, 7, 7, 7, 7, 7, 7, 7], [0, 4]]


def _write(prefix: str, docs: list[list[int]], dtype: object = np.uint16, **kw: object) -> str:
    with IndexedDatasetWriter(prefix, dtype=dtype, **kw) as w:
        for d in docs:
            w.add_document(d)
    return prefix


@pytest.mark.parametrize("bad", [65536, -1, 70000])
def test_writer_rejects_ids_outside_dtype_and_leaves_nothing(tmp_path: Path, bad: int) -> None:
    prefix = str(tmp_path / "x")
    with pytest.raises(ValueError, match=f"token id {bad} does not fit uint16"):
        _write(prefix, [[1, 2], [3, bad]])
    assert list(tmp_path.iterdir()) == []


def test_writer_rejects_non_integer_ids(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must be integers"):
        _write(str(tmp_path / "x"), [[1.5, 2.0]])


def test_int32_writer_keeps_large_ids(tmp_path: Path) -> None:
    prefix = _write(str(tmp_path / "x"), [[0, 2**31 - 1, 100_000]], dtype=np.int32)
    assert IndexedDataset(prefix)[0].tolist() == [0, 2**31 - 1, 100_000]
    with pytest.raises(ValueError, match="does not fit int32"):
        _write(str(tmp_path / "y"), [[2**31]], dtype=np.int32)


def test_tmp_suffix_publishes_only_on_success(tmp_path: Path) -> None:
    final = str(tmp_path / "part-00000")
    w = IndexedDatasetWriter(final, dtype=np.uint16, tmp_suffix=".attempt-1.tmp")
    w.add_document([1, 2, 3])
    assert not Path(f"{final}.bin").exists()
    assert Path(f"{final}.attempt-1.tmp.bin").exists()
    w.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part-00000.bin", "part-00000.idx"]
    assert IndexedDataset(final)[0].tolist() == [1, 2, 3]

    other = str(tmp_path / "part-00001")
    with pytest.raises(RuntimeError, match="task killed"):
        with IndexedDatasetWriter(other, tmp_suffix=".tmp") as w2:
            w2.add_document([5])
            raise RuntimeError("task killed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part-00000.bin", "part-00000.idx"]


def test_publish_moves_pair(tmp_path: Path) -> None:
    tmp = _write(str(tmp_path / "a.tmp"), DOCS)
    publish(tmp, str(tmp_path / "sub" / "a"))
    assert [d.tolist() for d in IndexedDataset(str(tmp_path / "sub" / "a"))] == DOCS
    assert not Path(f"{tmp}.idx").exists()


def test_reader_indexing(tmp_path: Path) -> None:
    ds = IndexedDataset(_write(str(tmp_path / "x"), DOCS))
    assert len(ds) == 4 and ds.num_documents == 4 and ds.num_tokens == 15
    assert ds[-1].tolist() == [0, 4] and ds[1].dtype == np.uint16
    assert [a.tolist() for a in ds[1:3]] == DOCS[1:3]
    assert ds.document(2).tolist() == DOCS[2]
    with pytest.raises(IndexError):
        ds[4]
    with pytest.raises(ValueError, match="contiguous"):
        ds[::2]


def test_memory_fs_round_trip_merge_validate() -> None:
    root = f"memory://megatron-{uuid.uuid4().hex}"
    a = _write(f"{root}/shards/part-00000", DOCS[:2])
    b = _write(f"{root}/shards/part-00001", [], tmp_suffix=".tmp")
    c = _write(f"{root}/shards/part-00002", DOCS[2:])
    fs = fsspec.filesystem("memory")
    assert fs.exists(f"{root}/shards/part-00001.idx") and not fs.exists(f"{root}/shards/part-00001.tmp.idx")
    out = f"{root}/megatron/src"
    result = merge_indexed_datasets([a, b, c], out, chunk_size=3)
    assert (result.documents, result.sequences, result.tokens) == (4, 4, 15)
    ds = IndexedDataset(out)
    assert [ds[i].tolist() for i in range(len(ds))] == DOCS
    assert ds.document_indices.tolist() == [0, 1, 2, 3, 4]
    assert validate(out).tokens == 15
    assert IndexedDataset(b).num_documents == 0


def test_storage_concat_mixed_sources(tmp_path: Path) -> None:
    mem = f"memory://concat-{uuid.uuid4().hex}/m.bin"
    with fsspec.open(mem, "wb") as f:
        f.write(b"MEMORY")
    (tmp_path / "a.bin").write_bytes(b"abc" * 1000)
    (tmp_path / "e.bin").write_bytes(b"")
    srcs = [str(tmp_path / "a.bin"), mem, str(tmp_path / "e.bin"), str(tmp_path / "a.bin")]
    n = storage.concat(srcs, str(tmp_path / "out.bin"), chunk_size=7)
    assert (
        (tmp_path / "out.bin").read_bytes()
        == b"abc" * 1000 + b"MEMORY" + b"abc" * 1000
        == b"".join(fsspec.open(s, "rb").open().read() for s in srcs)
    )
    assert n == 6006


def test_merge_rejects_mixed_dtypes_and_truncated_inputs(tmp_path: Path) -> None:
    a = _write(str(tmp_path / "a"), DOCS)
    b = _write(str(tmp_path / "b"), DOCS, dtype=np.int32)
    with pytest.raises(IndexedDatasetError, match=r"b\.idx: dtype int32 differs from uint16"):
        merge_indexed_datasets([a, b], str(tmp_path / "out"))
    with open(f"{a}.bin", "r+b") as f:
        f.truncate(10)
    with pytest.raises(IndexedDatasetError, match=r"a\.bin: 10 bytes, its index says 30"):
        merge_indexed_datasets([a], str(tmp_path / "out"))
    assert not (tmp_path / "out.bin").exists() and not (tmp_path / "out.idx").exists()
    with pytest.raises(ValueError, match="no inputs"):
        merge_indexed_datasets([], str(tmp_path / "out"))
    merge_indexed_datasets([], str(tmp_path / "none"), dtype=np.uint16)
    assert validate(str(tmp_path / "none")).documents == 0


def test_validate_accepts_good_and_catches_truncated_bin(tmp_path: Path) -> None:
    prefix = _write(str(tmp_path / "x"), DOCS)
    report = validate(prefix)
    assert (report.documents, report.sequences, report.tokens, report.bin_bytes) == (4, 4, 15, 30)
    with open(f"{prefix}.bin", "r+b") as f:
        f.truncate(28)
    with pytest.raises(IndexedDatasetError, match=r"x\.bin: 28 bytes.*30 bytes"):
        validate(prefix)


@pytest.mark.parametrize(
    ("offset", "patch", "message"),
    [
        (0, b"MMIDIDY", r"x\.idx: bad magic"),
        (9, struct.pack("<Q", 2), r"x\.idx: unsupported index version 2"),
        (17, b"\x09", r"x\.idx: unknown dtype code 9"),
        (18, struct.pack("<Q", 5), r"x\.idx: index truncated"),
        (34 + 16 + 8, struct.pack("<q", 3), r"x\.idx: sequence 1 pointer 3 != 6"),
        (34 + 48 + 16, struct.pack("<q", 0), r"x\.idx: document indices decrease at position 2"),
        (34 + 48 + 32, struct.pack("<q", 3), r"x\.idx: last document index 3 != sequence count 4"),
    ],
)
def test_validate_catches_corrupted_index(tmp_path: Path, offset: int, patch: bytes, message: str) -> None:
    prefix = _write(str(tmp_path / "x"), DOCS)
    data = bytearray(Path(f"{prefix}.idx").read_bytes())
    data[offset : offset + len(patch)] = patch
    Path(f"{prefix}.idx").write_bytes(bytes(data))
    with pytest.raises(IndexedDatasetError, match=message):
        validate(prefix)


def test_validate_catches_trailing_idx_bytes(tmp_path: Path) -> None:
    prefix = _write(str(tmp_path / "x"), DOCS)
    with open(f"{prefix}.idx", "ab") as f:
        f.write(b"\x00" * 4)  # e.g. a multimodal mode array
    with pytest.raises(IndexedDatasetError, match=r"x\.idx: 126 bytes.*need 122"):
        validate(prefix)


def test_describe_dataset(tmp_path: Path) -> None:
    prefix = _write(str(tmp_path / "x"), DOCS)
    info = describe_dataset(prefix, decode=lambda ids: ",".join(map(str, ids)), n_samples=2, max_sample_tokens=2)
    assert (info["documents"], info["sequences"], info["tokens"], info["dtype"]) == (4, 4, 15, "uint16")
    # lengths 3, 1, 9, 2 -> buckets [1,2): 1, [2,4): 2, [8,16): 1
    assert info["length_histogram"] == [
        {"min": 1, "max_exclusive": 2, "count": 1},
        {"min": 2, "max_exclusive": 4, "count": 2},
        {"min": 8, "max_exclusive": 16, "count": 1},
    ]
    assert info["document_length"]["max"] == 9 and info["document_length"]["min"] == 1
    assert info["samples"] == [
        {"document": 0, "num_tokens": 3, "truncated": True, "tokens": [1, 2], "text": "1,2"},
        {"document": 1, "num_tokens": 1, "truncated": False, "tokens": [65535], "text": "65535"},
    ]
    empty = describe_dataset(_write(str(tmp_path / "e"), []))
    assert empty["documents"] == 0 and empty["length_histogram"] == [] and empty["samples"] == []
