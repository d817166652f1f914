"""One storage layer for every stage: local paths and fsspec URLs (gs://, s3://, memory://).

File-system objects are created where they are used (inside each task), never shipped from the
driver: fsspec file systems are not fork-safe (docs/running.md, Cluster and storage).
"""

from __future__ import annotations

import json
import os
import posixpath
from typing import Any

import fsspec
from fsspec.core import url_to_fs

GLOB_CHARS = "*?["


def filesystem(path: str):
    """``(fs, path_in_fs)`` for a local path or URL."""
    return url_to_fs(path)


def is_local(path: str) -> bool:
    """True for plain paths and ``file://`` URLs."""
    return "://" not in path or path.startswith("file://")


def join(base: str, *parts: str) -> str:
    """Join path parts with '/' (URLs) or the OS separator (local paths)."""
    if is_local(base):
        return os.path.join(base, *parts)
    return posixpath.join(base, *parts)


def unstrip(template: str, fs_path: str) -> str:
    """Turn a path returned by ``fs`` back into a URL with the scheme of ``template``."""
    if "://" in template and "://" not in fs_path:
        scheme = template.split("://", 1)[0]
        return f"{scheme}://{fs_path}"
    return fs_path


def expand(pattern: str) -> list[str]:
    """Files matching a path, directory (all files below it) or glob, sorted; [] if none."""
    fs, path = filesystem(pattern)
    if any(c in path for c in GLOB_CHARS):
        found = [p for p in fs.glob(path) if fs.isfile(p)]
    elif fs.isdir(path):
        found = [p for p in fs.find(path) if not posixpath.basename(p).startswith(("_", "."))]
    elif fs.exists(path):
        found = [path]
    else:
        found = []
    return sorted(unstrip(pattern, p) for p in found)


def exists(path: str) -> bool:
    """Whether a file or directory exists."""
    fs, p = filesystem(path)
    return fs.exists(p)


def read_bytes(path: str) -> bytes:
    """Whole file as bytes (for small files: configs, manifests, vocabularies)."""
    with fsspec.open(path, "rb") as f:
        return f.read()


def read_text(path: str) -> str:
    """Whole file as UTF-8 text."""
    return read_bytes(path).decode("utf-8")


def write_bytes(path: str, data: bytes) -> None:
    """Write a small file; local writes go through a temporary name and an atomic rename."""
    if is_local(path):
        local = path[len("file://"):] if path.startswith("file://") else path
        os.makedirs(os.path.dirname(os.path.abspath(local)), exist_ok=True)
        tmp = f"{local}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, local)
        return
    fs, p = filesystem(path)
    with fs.open(p, "wb") as f:
        f.write(data)


def write_text(path: str, text: str) -> None:
    """Write UTF-8 text (see :func:`write_bytes`)."""
    write_bytes(path, text.encode("utf-8"))


def read_json(path: str) -> Any:
    """Parse a JSON file."""
    return json.loads(read_bytes(path))


def write_json(path: str, obj: Any) -> None:
    """Write an object as indented, key-sorted JSON."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def remove(path: str) -> None:
    """Delete a file or a directory tree if it exists."""
    fs, p = filesystem(path)
    if fs.exists(p):
        fs.rm(p, recursive=True)


def makedirs(path: str) -> None:
    """Create a directory (a no-op on object stores, which have none)."""
    fs, p = filesystem(path)
    fs.makedirs(p, exist_ok=True)
