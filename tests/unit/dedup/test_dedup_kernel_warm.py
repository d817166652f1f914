"""The dedup kernels compiled ahead of their first call (pipeline.dedup.numba_loader): for the argument types
the call sites really pass, and once per machine under a lock that lets another process skip to the next kernel."""

from __future__ import annotations

import fcntl
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from pipeline.dedup import numba_loader
from pipeline.dedup.hashes import shingle_hashes_and_counts
from pipeline.dedup.minhash import signatures_from_hashes
from pipeline.dedup.pair_jaccard import pair_jaccards
from pipeline.dedup.token_counts import token_counts
from pipeline.numba_backend import DEDUP
from tests.backends import numba_backend

TEXTS = [
    "The quick brown fox jumps over the lazy dog, then the quick brown fox jumps again. " * 3,
    "Größere Übung: the quick brown fox jumps over the lazy dog",
    "",
    "one",
    "a b c d e f g h i j k l m n o p",
]


@pytest.fixture
def numba_on():
    with numba_backend(DEDUP, True):
        yield


def _kernel(ref: tuple[str, str]) -> Any:
    return getattr(getattr(numba_loader._modules(), ref[0]), ref[1])


def test_compiled_types_are_the_call_sites_types(numba_on, monkeypatch):
    """Every kernel of every group is called by the public functions with exactly the types ensure_compiled
    compiles: a mismatch (an int32 offset, a writable word table, a strided view) would compile a second
    specialization in every worker, outside the lock."""
    numba_loader.ensure_compiled(*numba_loader.GROUPS)  # before the patching below: callees stay compiled kernels
    from numba import typeof

    seen: dict[str, set[tuple[Any, ...]]] = defaultdict(set)
    refs = {ref for group in numba_loader.GROUPS.values() for ref in group}
    for field, name in refs:
        module = getattr(numba_loader._modules(), field)
        kernel = getattr(module, name)

        def record(*args: Any, _kernel: Any = kernel, _name: str = name) -> Any:
            seen[_name].add(tuple(typeof(a) for a in args))
            return _kernel(*args)

        monkeypatch.setattr(module, name, record)
    for hash_name in ("sha1", "xxhash"):
        for shingle in ("word", "char"):
            hashes, offsets, _ = shingle_hashes_and_counts(TEXTS, 5, shingle, 3, hash_name)  # 3: the cap cuts
            for scheme in ("affine32", "legacy"):
                signatures_from_hashes(hashes, offsets, 8, 1, scheme)
    pair_jaccards(TEXTS, np.array([0, 1, 4]), np.array([1, 0, 3]), 5, "word", 3)
    pair_jaccards(TEXTS, np.array([0]), np.array([1]), 5, "char", None)
    token_counts(TEXTS)
    expected = numba_loader.argument_types()
    assert {name for _, name in refs} <= set(seen), "a kernel of GROUPS was never called"
    for name, types in seen.items():
        assert types == {expected[name]}, name


def test_in_turn_takes_free_items_first_then_waits_for_the_others():
    calls: list[tuple[str, bool]] = []
    held = {"b", "d"}

    def attempt(item: str, wait: bool) -> bool:
        calls.append((item, wait))
        return wait or item not in held

    assert list(numba_loader.in_turn(["a", "b", "c", "d"], attempt)) == ["a", "c", "b", "d"]
    assert calls == [("a", False), ("b", False), ("c", False), ("d", False), ("b", True), ("d", True)]


def test_a_kernel_locked_by_another_process_is_skipped_then_loaded(numba_on):
    """The lock file sits beside the kernel's cache files; held elsewhere (another open file description, as
    another process holds it), a non-waiting compile declines, and goes ahead once it is released."""
    ref = ("pair_jaccard", "window_counts")
    kernel = _kernel(ref)
    path = numba_loader._lock_path(kernel, ref[1])
    assert path is not None and path.parent.is_dir()
    signature = numba_loader.argument_types()[ref[1]]
    with open(path, "a") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        assert numba_loader._compile_locked(kernel, ref[1], signature, wait=False) is False
        fcntl.flock(other, fcntl.LOCK_UN)
    assert numba_loader._compile_locked(kernel, ref[1], signature, wait=False) is True
    assert signature in kernel.signatures


@pytest.mark.parametrize(
    ("master", "table_bytes", "hash_name", "warms"),
    [
        ("local[2]", 1000, "xxhash", ("xxhash", "affine32", "pair_jaccard")),
        ("local[2]", 1000, "sha1", ("sha1", "affine32", "pair_jaccard", "cap")),
        ("spark://host:7077", 1000, "sha1", ()),
        ("local[2]", 100, "sha1", ()),
    ],
)
def test_a_local_run_compiles_its_kernels_in_the_driver(
    numba_on, monkeypatch, tmp_path, master, table_bytes, hash_name, warms
):
    """The dedup stage's driver compiles the run's kernels in the background when its executors share this
    machine's cache and its input reaches the compiled kernels (twice PIPELINE_NUMBA_AFTER bytes of Parquet)."""
    from pipeline.config import load_config_text
    from pipeline.dedup.stage import _warm_kernels
    from pipeline.stage_api import layout
    from pipeline.stage_api.context import RunContext
    from tests.config_texts import config_text, write_jsonl

    text = config_text(write_jsonl(tmp_path), output=str(tmp_path / "run"))
    ctx = RunContext(load_config_text(text, [f"spark.master={master}", f"dedup.hash={hash_name}"]))
    table = tmp_path / "run" / layout.DOCUMENTS
    table.mkdir(parents=True)
    (table / "part-0.parquet").write_bytes(b"\0" * table_bytes)
    monkeypatch.setenv("PIPELINE_NUMBA_AFTER", "250")
    monkeypatch.setattr(numba_loader, "_ready", set())
    thread = _warm_kernels(ctx, layout.DOCUMENTS)
    assert (thread is not None) is bool(warms)
    if thread is not None:
        thread.join()
        assert numba_loader._ready == {name for group in warms for _, name in numba_loader.GROUPS[group]}
    assert ctx._spark is None  # nothing here starts Spark


def test_the_warm_up_sizes_the_table_by_the_files_spark_reads(numba_on, monkeypatch, tmp_path):
    """Side files (checksums, a leftover attempt directory, _SUCCESS) and an unpartitioned table's subdirectory
    are no input: only the data files Spark's scan reads count towards the threshold."""
    from pipeline.config import load_config_text
    from pipeline.dedup.stage import _warm_kernels
    from pipeline.stage_api import layout
    from pipeline.stage_api.context import RunContext
    from tests.config_texts import config_text, write_jsonl

    text = config_text(write_jsonl(tmp_path), output=str(tmp_path / "run"))
    ctx = RunContext(load_config_text(text, ["spark.master=local[2]"]))
    table = tmp_path / "run" / layout.DOCUMENTS
    for name, size in [
        ("part-0.parquet", 100),
        (".part-0.parquet.crc", 1000),
        ("_temporary/0/part-1.parquet", 1000),
        ("_SUCCESS", 1000),
        ("sub/part-2.parquet", 1000),
    ]:
        (table / name).parent.mkdir(parents=True, exist_ok=True)
        (table / name).write_bytes(b"\0" * size)
    monkeypatch.setenv("PIPELINE_NUMBA_AFTER", "250")
    monkeypatch.setattr(numba_loader, "_ready", set())
    assert _warm_kernels(ctx, layout.DOCUMENTS) is None
    assert numba_loader._ready == set()
