"""Where the dedup family's numba kernels are imported and compiled: here, once, when a call first runs compiled.

A call site asks :func:`compiled_kernels` with its kernel name, its input size and the kernel groups
(:data:`GROUPS`) it is about to call; the family switch (:data:`pipeline.numba_backend.DEDUP`) decides, and
the answer is either the kernel modules or ``None`` (the pure Python/numpy path, which gives identical results).

Before the first compiled call of a group, :func:`ensure_compiled` compiles its kernels (or loads them from
numba's cache) for the argument types the call sites pass (:func:`argument_types`), each under a file lock
beside the kernel's cache files: processes sharing a cache (a local run's Python workers, the driver warming
them with :func:`warm_in_background`) compile each kernel once between them, one kernel each at a time, and
load what another has compiled, instead of all compiling every kernel at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from pipeline.numba_backend import DEDUP
from pipeline.numba_cache import ensure_numba_cache_dir

try:
    import fcntl
except ImportError:  # not POSIX: every process compiles for itself, as numba does
    fcntl = None  # type: ignore[assignment]


class DedupKernels(NamedTuple):
    """The compiled twins of the dedup kernels, one module each."""

    shingles: ModuleType  # shingles_numba: a batch's units (UTF-8 ranges, or unit hashes), its word table
    sha1: ModuleType  # sha1_numba: SHA-1 shingle hashes
    hashes: ModuleType  # hashes_numba: fast-hash K-gram windows
    minhash: ModuleType  # minhash_numba: signature matrices
    pair_jaccard: ModuleType  # pair_jaccard_numba: distinct shingles and exact Jaccard of pairs


# The kernels each call site calls, as (DedupKernels field, kernel): token counts, shingle hashes by hash, the
# max_shingles cut (SHA-1 window keys, the first distinct windows), signatures by scheme, verification's pair Jaccard.
# Slowest to compile first: while one process compiles it, the others take the next ones.
GROUPS: dict[str, tuple[tuple[str, str], ...]] = {
    "units": (("shingles", "utf8_units"),),
    "sha1": (("sha1", "sha1_windows"), ("shingles", "utf8_units")),
    "xxhash": (("shingles", "unit_hashes"), ("hashes", "window_hashes")),
    "cap": (("sha1", "sha1_windows"), ("shingles", "first_distinct_windows")),
    "affine32": (("minhash", "affine32_signatures"),),
    "legacy": (("minhash", "legacy_signatures"),),
    "pair_jaccard": (
        ("pair_jaccard", "distinct_shingles_upto"),
        ("shingles", "utf8_units"),
        ("pair_jaccard", "pair_jaccards"),
        ("pair_jaccard", "window_counts"),
    ),
}

_ready: set[str] = set()  # kernels this process has compiled or loaded for their call sites' types


def _modules() -> DedupKernels:
    # lazy: importing numba and loading (or compiling) the kernels costs seconds, paid only by calls that use them
    from pipeline.dedup import hashes_numba, minhash_numba, pair_jaccard_numba, sha1_numba, shingles_numba

    return DedupKernels(shingles_numba, sha1_numba, hashes_numba, minhash_numba, pair_jaccard_numba)


def compiled_kernels(kernel: str, size: int, *groups: str) -> DedupKernels | None:
    """The compiled kernels, with ``groups`` compiled (:func:`ensure_compiled`), when this call of ``kernel``
    on ``size`` bytes runs compiled (:meth:`pipeline.numba_backend.NumbaSwitch.use`), else ``None``."""
    if not DEDUP.use(kernel, size):
        return None
    ensure_compiled(*groups)
    return _modules()


def kernel_groups(hash: str, scheme: str, verify: bool, capped: bool) -> tuple[str, ...]:
    """The groups a dedup run's features (and verify) steps call; the ``max_shingles`` cut's (``capped``) only
    with SHA-1, whose window hashes it shares (a document over the cap needs them; most batches have none)."""
    return (hash, scheme, *(("pair_jaccard",) if verify else ()), *(("cap",) if capped and hash == "sha1" else ()))


@lru_cache(maxsize=1)
def argument_types() -> dict[str, tuple[Any, ...]]:
    """Each kernel's numba argument types as its call sites pass them (dtype, layout, read-only, scalars)."""
    from numba import typeof

    u8, u32, u64, i64 = (np.zeros(1, dtype) for dtype in (np.uint8, np.uint32, np.uint64, np.int64))
    word, a32, a64 = np.zeros(1, np.bool_), np.zeros(1, np.uint32), np.zeros(1, np.uint64)
    for array in (word, a32, a64):  # shingles_numba.word_table() and minhash.permutations() are read-only
        array.setflags(write=False)
    b32, b64 = a32, a64
    ngram = cap = 5  # Python ints: int64
    examples: dict[str, tuple[Any, ...]] = {
        "utf8_units": (u32, i64, word, True),
        "unit_hashes": (u32, i64, word, True),
        "sha1_windows": (u8, i64, i64, i64, ngram),
        "window_hashes": (u64, i64, ngram),
        "first_distinct_windows": (u8, i64, i64, i64, i64, u32, ngram, cap),
        "affine32_signatures": (u32, i64, a32, b32, np.zeros((1, 1), np.uint32)),
        "legacy_signatures": (u32, i64, a64, b64, np.zeros((1, 1), np.uint64)),
        "window_counts": (i64, ngram),
        "distinct_shingles_upto": (u8, i64, i64, i64, ngram, i64),
        "pair_jaccards": (u8, u64, i64, i64, i64, i64, i64),
    }
    return {name: tuple(typeof(value) for value in args) for name, args in examples.items()}  # type: ignore[no-untyped-call]


def ensure_compiled(*groups: str) -> None:
    """Compile, or load from numba's cache, the kernels of ``groups`` not yet ready in this process.

    First every kernel whose lock is free is compiled under it; then the process waits for the others' locks
    in turn and, normally, loads what the holder compiled."""
    names = [ref for group in groups for ref in GROUPS[group] if ref[1] not in _ready]
    if not names:
        return
    kernels = _modules()
    types = argument_types()

    def attempt(ref: tuple[str, str], wait: bool) -> bool:
        dispatcher = getattr(getattr(kernels, ref[0]), ref[1])
        return _compile_locked(dispatcher, ref[1], types[ref[1]], wait)

    for ref in in_turn(list(dict.fromkeys(names)), attempt):
        _ready.add(ref[1])


def in_turn(items: Sequence[Any], attempt: Callable[[Any, bool], bool]) -> Iterable[Any]:
    """Yield ``items`` as ``attempt(item, wait)`` completes them: all with ``wait=False`` first (those it declines
    are skipped), then the skipped ones in order with ``wait=True`` (which must complete them)."""
    skipped = []
    for item in items:
        if attempt(item, False):
            yield item
        else:
            skipped.append(item)
    for item in skipped:
        attempt(item, True)
        yield item


def _lock_path(dispatcher: Any, name: str) -> Path | None:
    """A lock file beside the kernel's cache files (numba's cache directory for it), or None without a cache."""
    cache_path = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
    return Path(cache_path) / f".{dispatcher.__module__}.{name}.lock" if cache_path else None


def _compile_locked(dispatcher: Any, name: str, signature: tuple[Any, ...], wait: bool) -> bool:
    """``dispatcher.compile(signature)`` under the kernel's lock; False (nothing done) when the lock is held
    and ``wait`` is False. Without a lock file (no cache, not writable, not POSIX) it just compiles."""
    path = _lock_path(dispatcher, name)
    handle = None
    if path is not None and fcntl is not None:
        with suppress(OSError):
            handle = open(path, "a")  # noqa: SIM115 - closed below, after the compilation
    if handle is None:
        dispatcher.compile(signature)
        return True
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        try:
            dispatcher.compile(signature)
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return True


def warm_in_background(groups: Sequence[str]) -> threading.Thread | None:
    """A started daemon thread compiling ``groups`` (:func:`ensure_compiled`) for the processes that will call
    them, or None when the dedup kernels are turned off (``PIPELINE_DEDUP_NUMBA=0``). Join it before exit."""
    if os.environ.get(DEDUP.env_var, "1") == "0":
        return None
    ensure_numba_cache_dir()  # here, not in the thread: a Spark session started meanwhile passes it to the workers

    def run() -> None:
        with suppress(Exception):  # a failure here is the workers' to meet and report on their first call
            if DEDUP.enabled():
                ensure_compiled(*groups)

    thread = threading.Thread(target=run, name="pipeline-dedup-kernels", daemon=True)
    thread.start()
    return thread
