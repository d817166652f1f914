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
from pipeline.errors import PipelineError
from pipeline.storage.conditional import create_if_absent, read_versioned, replace_if_version

HEAD_NAME = "HEAD.json"
FORMAT = "pipeline-dedup-index/1"
PARAMETER_KEYS = ("num_perm", "bands", "rows", "seed", "scheme", "hash", "ngram", "shingle", "max_shingles")


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
        return cls(raw["parameters"], raw.get("runs", {}), raw.get("generations", {}), int(raw.get("serial", 0)))

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


def _place(entry: dict[str, Any]) -> tuple[int, str]:
    """Commit order: by ``sequence`` (the HEAD serial of the first commit); entries written before sequences
    existed come first, by their commit time."""
    return entry.get("sequence", 0), entry["committed"]


def head_path(index: str) -> str:
    return storage.join(index, HEAD_NAME)


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
