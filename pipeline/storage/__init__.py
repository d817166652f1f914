"""One storage layer for every stage: local paths and fsspec URLs (gs://, s3://, memory://).

* :func:`resolve` turns a path into ``(file system, path in it)``; :func:`is_local` says whether a
  path is on the local disk (memory mapping, ``os`` calls and atomic renames work there).
* Writes that others may read while they happen go through one commit rule: locally, write under
  a staged name and rename (``os.replace``, atomic); on object stores, an object appears whole when
  its upload completes, so it is written under its final name. :func:`open_atomic` does this for
  one file; :func:`commit` publishes staged files in order, the last one being the commit point.
* :func:`list_files` lists a source's files with their sizes and versions (:mod:`pipeline.storage.listing`).
* :func:`concat` concatenates files, server side when it can (:mod:`pipeline.storage.objectstore`).

File-system objects are created where they are used (inside each task), never shipped from the
driver: fsspec file systems are not fork-safe (docs/running.md, Cluster and storage).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

import fsspec

from pipeline.storage.listing import FileInfo, Listing, list_files
from pipeline.storage.objectstore import server_side_concat
from pipeline.storage.paths import is_local, join, local_path, resolve, scheme, unstrip

__all__ = [
    "DEFAULT_CHUNK",
    "commit",
    "concat",
    "ensure_parent",
    "exists",
    "FileInfo",
    "Listing",
    "list_files",
    "is_local",
    "join",
    "local_path",
    "makedirs",
    "open_atomic",
    "read_bytes",
    "read_json",
    "read_text",
    "remove",
    "resolve",
    "scheme",
    "size",
    "unstrip",
    "unwritable",
    "write_bytes",
    "write_json",
    "write_text",
]
DEFAULT_CHUNK = 16 << 20


def exists(path: str) -> bool:
    """Whether a file or directory exists."""
    fs, p = resolve(path)
    return fs.exists(p)


def size(path: str) -> int:
    """Size of a file in bytes."""
    fs, p = resolve(path)
    return int(fs.size(p))


def read_bytes(path: str) -> bytes:
    """Whole file as bytes (for small files: configs, manifests, vocabularies)."""
    with fsspec.open(path, "rb") as f:
        return f.read()


def read_text(path: str) -> str:
    """Whole file as UTF-8 text."""
    return read_bytes(path).decode("utf-8")


def read_json(path: str) -> Any:
    """Parse a JSON file."""
    return json.loads(read_bytes(path))


def ensure_parent(path: str) -> None:
    """Create the parent directory of a local ``path`` (object stores have no directories)."""
    if is_local(path):
        parent = os.path.dirname(os.path.abspath(local_path(path)))
        os.makedirs(parent, exist_ok=True)


@contextlib.contextmanager
def open_atomic(path: str, **storage_options: Any) -> Iterator[IO[bytes]]:
    """Open ``path`` for writing so that readers see the old file or the whole new one, never a part.

    Locally the bytes go to ``<path>.tmp-<pid>``, renamed over ``path`` on success and deleted on
    failure; elsewhere the object is written under its final name (it appears when the upload ends).
    """
    if not is_local(path):
        fs, inner = resolve(path, **storage_options)
        with fs.open(inner, "wb") as f:
            yield f
        return
    final = local_path(path)
    ensure_parent(final)
    staged = f"{final}.tmp-{os.getpid()}"
    try:
        with open(staged, "wb") as f:
            yield f
    except BaseException:
        remove(staged, best_effort=True)
        raise
    commit([(staged, final)])


def write_bytes(path: str, data: bytes) -> None:
    """Write a small file (see :func:`open_atomic`)."""
    with open_atomic(path) as f:
        f.write(data)


def write_text(path: str, text: str) -> None:
    """Write UTF-8 text (see :func:`open_atomic`)."""
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str, obj: Any) -> None:
    """Write an object as indented, key-sorted JSON."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def commit(moves: Sequence[tuple[str, str]], *, keep_staged: bool = False) -> None:
    """Publish staged files under their final names, in order: the last one is the commit point.

    Locally each move is an atomic ``os.replace``. On object stores (no rename) each staged object
    is copied server side, then deleted unless ``keep_staged`` (its directory is removed later).
    """
    for staged, final in moves:
        if is_local(staged) and is_local(final):
            source, target = local_path(staged), local_path(final)
            if os.path.dirname(source) != os.path.dirname(target):  # else the staged file's directory exists
                ensure_parent(final)
            os.replace(source, target)  # no file system object: a rename per file
            continue
        fs, s = resolve(staged)
        _, d = resolve(final)
        if keep_staged:
            fs.copy(s, d)
        else:
            fs.mv(s, d)


def remove(path: str, *, best_effort: bool = False) -> None:
    """Delete a file or a directory tree if it exists; ``best_effort`` never raises (error paths)."""
    try:
        fs, p = resolve(path)
        if fs.exists(p):
            fs.rm(p, recursive=True)
    except Exception:
        if not best_effort:
            raise


def unwritable(path: str) -> str | None:
    """The first local directory that keeps ``path`` from being replaced (deleted with what it holds, then
    written again): its directory, or ``path`` or a directory below it, that this process cannot write; when
    ``path`` does not exist, its nearest existing parent if that cannot be written. None when nothing stands in
    the way (and for object stores, whose permissions preflight's probes check). Directories only: deleting a
    read-only file needs a writable directory, not a writable file."""
    if not is_local(path):
        return None
    local = os.path.abspath(local_path(path))
    parent = os.path.dirname(local)
    while not os.path.exists(parent) and parent != os.path.dirname(parent):
        parent = os.path.dirname(parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        return parent
    if not os.path.isdir(local) or os.path.islink(local):  # absent, or a file or link: its directory decides
        return None
    for directory, subdirs, _files in os.walk(local):
        if not os.access(directory, os.W_OK | os.X_OK):
            return directory
        subdirs.sort()
    return None


def makedirs(path: str) -> None:
    """Create a directory (a no-op on object stores, which have none)."""
    fs, p = resolve(path)
    fs.makedirs(p, exist_ok=True)


def _copy_local(src: str, dst: Any, chunk_size: int, on_bytes: Callable[[int], None] | None) -> int:
    """Kernel-side copy (``os.sendfile``) of a local file onto an open local file; chunked."""
    total = 0
    with open(src, "rb") as f:
        length = os.fstat(f.fileno()).st_size
        while total < length:
            sent = os.sendfile(dst.fileno(), f.fileno(), total, min(chunk_size, length - total))
            if sent == 0:
                break
            total += sent
            if on_bytes:
                on_bytes(sent)
    return total


def concat(
    sources: Sequence[str], dest: str, *, chunk_size: int = DEFAULT_CHUNK, on_bytes: Callable[[int], None] | None = None
) -> int:
    """Concatenate ``sources`` into ``dest`` in order; bytes written.

    When ``dest`` and every source are in one ``gs://`` or ``s3://`` bucket the bytes never reach
    this process: GCS composes objects in a tree (at most 32 sources per call), S3 builds a
    multipart upload from copy parts (see :mod:`pipeline.storage.objectstore`). Local-to-local uses
    ``os.sendfile`` (no copy through Python); anything else goes through fsspec file objects
    ``chunk_size`` bytes at a time.
    """
    server_side = server_side_concat(sources, dest)
    if server_side is not None:
        return server_side(sources, dest, on_bytes=on_bytes)
    fs, inner = resolve(dest)
    ensure_parent(dest)
    total = 0
    all_local = is_local(dest) and hasattr(os, "sendfile")
    with fs.open(inner, "wb") as out:
        raw = getattr(out, "f", out)  # fsspec's LocalFileOpener wraps a real file as .f
        for src in sources:
            sfs, sinner = resolve(src)
            if all_local and is_local(src) and hasattr(raw, "fileno"):
                raw.flush()
                total += _copy_local(sinner, raw, chunk_size, on_bytes)
                continue
            with sfs.open(sinner, "rb") as f:
                while chunk := f.read(chunk_size):
                    raw.write(chunk)
                    total += len(chunk)
                    if on_bytes:
                        on_bytes(len(chunk))
    return total
