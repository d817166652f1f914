"""``HEAD.json`` of a dedup index: read it, check parameters, replace it by one conditional write.

On object stores the conditional write is :mod:`pipeline.storage.conditional`'s (the run lock's too):
GCS ``ifGenerationMatch``, S3 ``If-None-Match``/``If-Match`` (docs/dedup_index.md, Commit). Locally, an
``flock`` on ``HEAD.lock`` guards a compare of the ``serial`` field and an atomic rename. Every write
states the version it read; a write over a HEAD changed since raises :class:`FileExistsError`, and the
caller re-reads and retries.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from pipeline import storage
from pipeline.config import ConfigError
from pipeline.dedup.batches import LSH_KEYS
from pipeline.errors import PipelineError
from pipeline.storage.conditional import create_if_absent, read_versioned, replace_if_version

HEAD_NAME = "HEAD.json"
FORMAT = "pipeline-dedup-index/1"
PARAMETER_KEYS = LSH_KEYS  # an index is tied to the parameters of its band keys


class DedupIndexError(PipelineError, RuntimeError):
    """The dedup index cannot be used or updated; the message says why."""


class IndexParameterError(DedupIndexError):
    """The index was built with other MinHash parameters than this run's."""


@dataclass
class Head:
    """What HEAD.json holds: parameters, each run's generation, and each generation's size."""

    parameters: dict[str, Any]
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # run -> generation, documents, committed
    generations: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> documents, bytes
    serial: int = 0

    def to_bytes(self) -> bytes:
        data = {
            "format": FORMAT,
            "parameters": self.parameters,
            "runs": self.runs,
            "generations": self.generations,
            "serial": self.serial,
        }
        return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> Head:
        try:
            raw = json.loads(data)
        except ValueError:
            raise DedupIndexError(f"{where} is not JSON: not a dedup index HEAD") from None
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise DedupIndexError(f"{where} is not a dedup index HEAD (format {FORMAT!r} expected)")
        _check_shape(raw, where)
        return cls(raw["parameters"], raw.get("runs", {}), raw.get("generations", {}), raw.get("serial", 0))

    def live_generations(self, runs: list[str] | None = None) -> dict[str, list[str]]:
        """Generation id -> the runs whose documents it holds (sorted): of ``runs``, or of every run."""
        live: dict[str, list[str]] = {}
        for run, entry in sorted(self.runs.items()):
            if runs is None or run in runs:
                live.setdefault(entry["generation"], []).append(run)
        return live

    def runs_before(self, run: str) -> list[str]:
        """The runs ``run`` is deduplicated against (sorted): those committed before it, every run when it
        has not committed yet (docs/dedup_index.md, Order)."""
        if run not in self.runs:
            return sorted(self.runs)
        place = _place(self.runs[run])
        return sorted(r for r, entry in self.runs.items() if _place(entry) < place)

    def place(self, run: str, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry`` of a commit of ``run`` that is about to become HEAD ``serial + 1``: a first commit takes that
        serial as its ``sequence``; a recommit keeps the place (``sequence``, ``committed``) of its first."""
        first = self.runs.get(run)
        if first is None:
            return {**entry, "sequence": self.serial + 1}
        kept: dict[str, Any] = {k: first[k] for k in ("sequence", "committed") if k in first}
        return {**entry, **kept, "recommitted": entry["committed"]}


# what each key of HEAD.json holds (docs/dedup_index.md, Layout): a HEAD written by hand or cut short is refused
# naming the file and the first key that is missing or of the wrong type, never a KeyError later
# (required keys, optional keys) of a run's and of a generation's entry, with their types
RUN_KEYS: tuple[dict[str, type], dict[str, type]] = (
    {"generation": str, "documents": int},
    {"committed": str, "kept": int, "sequence": int, "recommitted": str},
)
GENERATION_KEYS: tuple[dict[str, type], dict[str, type]] = ({"documents": int, "bytes": int}, {})


def _check_shape(raw: dict[str, Any], where: str) -> None:
    """Refuse a HEAD with a missing or mistyped key, naming the file and the key (``runs.<run>.generation``)."""

    def need(value: Any, key: str, kind: type, missing: bool = False) -> None:
        if missing:
            raise DedupIndexError(f"{where}: key {key!r} is missing: a corrupt dedup index HEAD")
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            shown = repr(value)[:60]
            raise DedupIndexError(
                f"{where}: key {key!r} is {type(value).__name__} {shown}, not {kind.__name__}: "
                "a corrupt dedup index HEAD"
            )

    need(raw.get("parameters"), "parameters", dict, "parameters" not in raw)
    need(raw.get("serial", 0), "serial", int)
    for name, (required, optional) in (("runs", RUN_KEYS), ("generations", GENERATION_KEYS)):
        rows = raw.get(name, {})
        need(rows, name, dict)
        for item, entry in rows.items():
            need(entry, f"{name}.{item}", dict)
            for key, kind in required.items():
                need(entry.get(key), f"{name}.{item}.{key}", kind, key not in entry)
            for key, kind in optional.items():
                if key in entry:
                    need(entry[key], f"{name}.{item}.{key}", kind)


def _place(entry: dict[str, Any]) -> tuple[int, str]:
    """Commit order: by ``sequence`` (the HEAD serial of the first commit); entries written before sequences
    existed come first, by their commit time."""
    return entry.get("sequence", 0), entry.get("committed", "")


def head_path(index: str) -> str:
    return storage.join(index, HEAD_NAME)


def check_location(index: str) -> None:
    """Refuse a ``dedup.index`` that cannot hold an index, before any work (docs/dedup_index.md, Index): locally an
    existing file, a path below a file, or a directory this process cannot write; a ``HEAD.json`` that is not a
    file. ConfigError naming ``dedup.index``. (A bucket's reachability is preflight's storage probe.)"""
    if not storage.is_local(index):
        return
    local = os.path.abspath(storage.local_path(index))
    if os.path.exists(local) and not os.path.isdir(local):
        raise ConfigError("dedup.index", f"{index!r} is an existing file, not a directory")
    present = local
    while not os.path.exists(present):
        present = os.path.dirname(present)
    if not os.path.isdir(present):
        raise ConfigError("dedup.index", f"cannot create {index!r}: {present!r} is a file, not a directory")
    if not os.access(present, os.W_OK | os.X_OK):
        raise ConfigError("dedup.index", f"cannot write to {index!r}: {present!r} is not writable")
    head = os.path.join(local, HEAD_NAME)
    if os.path.lexists(head) and not os.path.isfile(head):
        raise ConfigError("dedup.index", f"{head!r} is not a file: not a dedup index")


def check_parameters(head: Head, wanted: dict[str, Any], index: str) -> None:
    """Refuse an index built with other MinHash parameters, naming the first key that differs."""
    for key in PARAMETER_KEYS:
        if head.parameters.get(key) != wanted.get(key):
            raise IndexParameterError(
                f"dedup index {index} was built with dedup.{key} = {head.parameters.get(key)!r}, this run has "
                f"{wanted.get(key)!r}: its band keys cannot be compared; use the index's parameters or a new index"
            )


def read_head(index: str) -> tuple[Head | None, str | None]:
    """HEAD and its version (None, None when the index has no HEAD yet)."""
    path = head_path(index)
    if storage.is_local(path):
        local = storage.local_path(path)
        if not os.path.exists(local):
            return None, None
        with open(local, "rb") as f:
            head = Head.from_bytes(f.read(), path)
        return head, str(head.serial)
    try:
        data, version = read_versioned(path)
    except FileNotFoundError:
        return None, None
    return Head.from_bytes(data, path), version


def write_head(index: str, head: Head, version: str | None) -> None:
    """Publish ``head`` if HEAD is still at ``version`` (None: still absent); FileExistsError otherwise."""
    path = head_path(index)
    head.serial += 1
    data = head.to_bytes()
    if storage.is_local(path):
        _write_local(path, data, version)
        return
    if version is None:
        create_if_absent(path, data)
    else:
        replace_if_version(path, data, version)


def _write_local(path: str, data: bytes, version: str | None) -> None:
    import fcntl

    local = storage.local_path(path)
    os.makedirs(os.path.dirname(os.path.abspath(local)), exist_ok=True)
    fd = os.open(local[: -len(HEAD_NAME)] + "HEAD.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        current = None
        if os.path.exists(local):
            with open(local, "rb") as f:
                current = str(Head.from_bytes(f.read(), path).serial)
        if current != version:
            raise FileExistsError(path)
        tmp = f"{local}.tmp-{os.getpid()}-{time.monotonic_ns()}"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        storage.commit([(tmp, local)])
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
