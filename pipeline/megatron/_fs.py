"""Small fsspec helpers. File systems are resolved per call, never cached in module state
(fsspec file systems are not fork-safe; docs/running.md, Cluster and storage)."""

from __future__ import annotations

import os
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem


def resolve(path: str) -> tuple[Any, str]:
    """``(filesystem, path-within-filesystem)`` for a local path or an fsspec URL."""
    fs, inner = fsspec.core.url_to_fs(os.fspath(path))
    return fs, inner


def is_local(fs: Any) -> bool:
    """True for the local file system (where memory mapping and ``os`` calls work)."""
    return isinstance(fs, LocalFileSystem)


def bin_path(prefix: str) -> str:
    """``prefix + ".bin"``."""
    return f"{prefix}.bin"


def idx_path(prefix: str) -> str:
    """``prefix + ".idx"``."""
    return f"{prefix}.idx"


def remove_quietly(path: str) -> None:
    """Delete ``path`` if it exists; never raises (used on error paths)."""
    try:
        fs, inner = resolve(path)
        if fs.exists(inner):
            fs.rm(inner)
    except Exception:  # noqa: BLE001 - best-effort cleanup while another error propagates
        pass


def ensure_parent(fs: Any, inner: str) -> None:
    """Create the parent directory of ``inner`` on file systems that have directories."""
    parent = fs._parent(inner)
    if parent and is_local(fs):
        fs.makedirs(parent, exist_ok=True)


def move(src: str, dest: str) -> None:
    """Move one file: ``os.replace`` locally (atomic), ``fs.mv`` elsewhere (copy + delete)."""
    fs, s = resolve(src)
    _, d = resolve(dest)
    if is_local(fs):
        ensure_parent(fs, d)
        os.replace(s, d)
    else:
        fs.mv(s, d)
