"""Paths of the storage layer: which file system a path lives on, and joining paths (no I/O)."""

from __future__ import annotations

import os
import posixpath
from typing import Any

from fsspec.core import url_to_fs


def resolve(path: str, **storage_options: Any) -> tuple[Any, str]:
    """``(fs, path_in_fs)`` for a local path or URL."""
    return url_to_fs(os.fspath(path), **storage_options)


def is_local(path: str) -> bool:
    """True for plain paths and ``file://`` URLs."""
    return "://" not in path or path.startswith("file://")


def local_path(path: str) -> str:
    """A local path without its ``file://`` scheme."""
    return path[len("file://") :] if path.startswith("file://") else path


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


def scheme(path: str) -> str:
    """``gs``, ``s3``, ``memory``... or ``file`` for local paths."""
    return path.split("://", 1)[0] if "://" in path else "file"
