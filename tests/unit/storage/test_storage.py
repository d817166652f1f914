"""The storage layer's rules on local disks and an fsspec memory file system (no Spark, no network)."""

from __future__ import annotations

import os
import uuid

import fsspec
import pytest

from pipeline import storage


@pytest.fixture()
def memory_dir():
    root = f"memory://storage-test-{uuid.uuid4().hex[:8]}"
    yield root
    fs = fsspec.filesystem("memory")
    if fs.exists(root):
        fs.rm(root, recursive=True)


def test_is_local_and_resolve_agree_with_fsspec(tmp_path):
    for path, local in (
        (str(tmp_path / "a"), True),
        (f"file://{tmp_path}/a", True),
        ("memory://x/a", False),
        ("gs://bucket/a", False),
    ):
        assert storage.is_local(path) == local
    fs, inner = storage.resolve(f"file://{tmp_path}/a")
    assert inner == f"{tmp_path}/a" and fs.protocol[0] == "file"


def test_open_atomic_keeps_the_old_file_until_the_new_one_is_complete(tmp_path):
    path = str(tmp_path / "sub" / "f.json")
    storage.write_text(path, "old")
    with pytest.raises(RuntimeError), storage.open_atomic(path) as f:
        f.write(b"half of the new")
        raise RuntimeError("writer died")
    assert open(path).read() == "old" and os.listdir(tmp_path / "sub") == ["f.json"]  # no staged file left
    storage.write_text(path, "new")
    assert open(path).read() == "new" and os.listdir(tmp_path / "sub") == ["f.json"]


def test_open_atomic_on_an_object_store_writes_the_final_object(memory_dir):
    storage.write_json(f"{memory_dir}/a/b.json", {"k": 1})
    assert storage.read_json(f"{memory_dir}/a/b.json") == {"k": 1}
    assert storage.read_bytes(f"{memory_dir}/a/b.json") == b'{\n  "k": 1\n}\n'


def test_commit_publishes_in_order_and_moves_or_keeps_staged_files(tmp_path, memory_dir):
    for base in (str(tmp_path), memory_dir):
        staged = [storage.join(base, "_tmp", n) for n in ("x.bin", "x.idx")]
        final = [storage.join(base, "out", n) for n in ("x.bin", "x.idx")]
        for path, data in zip(staged, (b"bin", b"idx"), strict=True):
            storage.write_bytes(path, data)
        storage.commit(list(zip(staged, final, strict=True)))
        assert [storage.read_bytes(p) for p in final] == [b"bin", b"idx"]
        assert not any(storage.exists(p) for p in staged)
    storage.write_bytes(f"{memory_dir}/_tmp/y", b"y")
    storage.commit([(f"{memory_dir}/_tmp/y", f"{memory_dir}/out/y")], keep_staged=True)
    assert storage.read_bytes(f"{memory_dir}/out/y") == b"y" and storage.exists(f"{memory_dir}/_tmp/y")


def test_remove_deletes_trees_and_best_effort_never_raises(tmp_path, monkeypatch):
    storage.write_text(str(tmp_path / "d" / "e" / "f"), "x")
    storage.remove(str(tmp_path / "d"))
    assert not (tmp_path / "d").exists()
    storage.remove(str(tmp_path / "absent"))  # missing: nothing to do

    def broken(path, **_):
        raise OSError("storage unreachable")

    monkeypatch.setattr(storage, "resolve", broken)
    storage.remove(str(tmp_path / "x"), best_effort=True)
    with pytest.raises(OSError, match="unreachable"):
        storage.remove(str(tmp_path / "x"))


def test_concat_joins_local_and_remote_sources_in_order(tmp_path, memory_dir):
    local = [tmp_path / f"p{i}" for i in range(3)]
    for i, p in enumerate(local):
        p.write_bytes(bytes([i]) * (i + 5))
    storage.write_bytes(f"{memory_dir}/r", b"remote")
    sources = [str(local[0]), f"{memory_dir}/r", str(local[1]), str(local[2])]
    expected = b"".join(storage.read_bytes(s) for s in sources)
    for dest in (str(tmp_path / "out" / "all.bin"), f"{memory_dir}/all.bin"):
        seen: list[int] = []
        assert storage.concat(sources, dest, chunk_size=4, on_bytes=seen.append) == len(expected)
        assert storage.read_bytes(dest) == expected and sum(seen) == len(expected)
