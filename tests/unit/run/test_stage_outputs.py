"""Resume verifies what it reuses (issue 14, item 7): the marker's file list and checksums catch a truncated
.bin, a garbage .idx, an overwritten .bin head, a deleted or an added Parquet part file. No Spark here."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from pipeline.megatron import IndexedDataset, IndexedDatasetWriter
from pipeline.run.registry import stage
from pipeline.run.stage_outputs import record, verify


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run directory with merge-blend's and ingest's kind of outputs (real IndexedDataset pairs)."""
    rng = np.random.default_rng(7)
    (tmp_path / "megatron").mkdir()
    for name, docs in (("web", 120), ("wiki", 3)):
        with IndexedDatasetWriter(str(tmp_path / "megatron" / name), dtype=np.uint16) as w:
            for _ in range(docs):
                w.add_document(rng.integers(0, 50000, size=int(rng.integers(1, 30000))))
    (tmp_path / "blend").mkdir()
    (tmp_path / "blend" / "blend.json").write_text("{}")
    docs = tmp_path / "documents"
    docs.mkdir()
    for i in range(3):
        (docs / f"part-0000{i}-abc.snappy.parquet").write_bytes(os.urandom(1000 + i))
        (docs / f".part-0000{i}-abc.snappy.parquet.crc").write_bytes(b"crc")
    (docs / "_SUCCESS").write_bytes(b"")
    (tmp_path / "rejects").mkdir()
    return tmp_path


def test_an_untouched_run_verifies_and_hidden_files_are_ignored(run_dir):
    assert (run_dir / "megatron" / "web.bin").stat().st_size > 2 << 20  # head and tail samples differ
    merged, ingest = record(str(run_dir), stage("merge-blend").writes), record(str(run_dir), stage("ingest").writes)
    assert set(merged["checksums"]) == {
        "megatron/web.bin",
        "megatron/web.idx",
        "megatron/wiki.bin",
        "megatron/wiki.idx",
    }
    assert "documents/_SUCCESS" in ingest["files"] and not any("crc" in f for f in ingest["files"])
    (run_dir / "documents" / ".part-00000-abc.snappy.parquet.crc").write_bytes(b"changed")
    assert verify(str(run_dir), stage("merge-blend").writes, merged) == []
    assert verify(str(run_dir), stage("ingest").writes, ingest) == []


def test_truncated_bin_is_detected(run_dir):
    marker = record(str(run_dir), stage("merge-blend").writes)
    path = run_dir / "megatron" / "web.bin"
    size = path.stat().st_size
    os.truncate(path, size - 100)
    problems = verify(str(run_dir), stage("merge-blend").writes, marker)
    assert any(p.startswith("megatron/web.bin:") and str(size) in p for p in problems), problems


def test_garbage_idx_of_the_same_size_is_detected(run_dir):
    marker = record(str(run_dir), stage("merge-blend").writes)
    path = run_dir / "megatron" / "wiki.idx"
    path.write_bytes(os.urandom(path.stat().st_size))
    problems = verify(str(run_dir), stage("merge-blend").writes, marker)
    assert any(p.startswith("megatron/wiki.idx") and "checksum" in p for p in problems), problems


def test_same_size_overwrite_of_the_bin_head_or_tail_is_detected(run_dir):
    marker = record(str(run_dir), stage("merge-blend").writes)
    path = run_dir / "megatron" / "web.bin"
    data = bytearray(path.read_bytes())
    data[-10:] = bytes(10 - i for i in range(10))
    path.write_bytes(bytes(data))
    assert len(IndexedDataset(str(run_dir / "megatron" / "web"))) == 120  # still a readable pair
    problems = verify(str(run_dir), stage("merge-blend").writes, marker)
    assert problems == ["megatron/web.bin: checksum differs from the one recorded when the stage finished"]


def test_deleted_and_added_parquet_parts_are_detected(run_dir):
    marker = record(str(run_dir), stage("ingest").writes)
    (run_dir / "documents" / "part-00001-abc.snappy.parquet").unlink()
    (run_dir / "rejects" / "part-00009-zzz.snappy.parquet").write_bytes(b"x")
    problems = verify(str(run_dir), stage("ingest").writes, marker)
    assert "documents/part-00001-abc.snappy.parquet: missing" in problems
    assert "rejects/part-00009-zzz.snappy.parquet: not written by the stage" in problems


def test_verification_works_through_fsspec_urls(run_dir):
    """The same check on a non-local file system (memory://), as on gs:// and s3://."""
    import fsspec

    fs = fsspec.filesystem("memory")
    for path in run_dir.rglob("*"):
        if path.is_file():
            fs.pipe_file(f"/run/{path.relative_to(run_dir)}", path.read_bytes())
    marker = record("memory://run", stage("merge-blend").writes)
    assert verify("memory://run", stage("merge-blend").writes, marker) == []
    fs.pipe_file("/run/megatron/web.bin", fs.cat_file("/run/megatron/web.bin")[:-2])
    assert any(p.startswith("megatron/web.bin") for p in verify("memory://run", stage("merge-blend").writes, marker))
