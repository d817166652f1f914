"""Listing input files: a path, a directory (every file below it) or a glob, with each file's size and version.

Inside a directory, names starting with ``_`` or ``.`` (Hadoop's ``_SUCCESS``, ``.crc`` side files, a
``_temporary/`` directory) are left out unless ``hidden`` is true, and returned as ``skipped`` so the
caller can count them: never dropped unseen (docs/bad_input.md, Files). On the local disk, links to
directories are followed; a link to the directory it sits in or to one above it (a loop) is not entered
and is listed in ``skipped``. An existing path is itself even when it holds ``*``, ``?`` or ``[``; any
other such path is a glob (``[[]`` matches a literal ``[``).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field

from pipeline.storage.paths import is_local, resolve, unstrip

GLOB_CHARS = "*?["
HIDDEN_PREFIXES = ("_", ".")
VERSION_KEYS = ("generation", "ETag", "etag", "mtime", "LastModified", "updated", "created")


@dataclass(frozen=True, order=True)
class FileInfo:
    """One listed file: its URL, size, and version (what changes when it is rewritten: the local
    modification time in ns, an object's generation or ETag)."""

    url: str
    size: int
    version: str


@dataclass
class Listing:
    """The files a path names, sorted by URL, and what a directory listing left out (relative to the
    directory; a directory ends with ``/``)."""

    files: list[FileInfo] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def is_hidden(name: str) -> bool:
    """Whether a file or directory name is left out of a directory listing by default."""
    return name.startswith(HIDDEN_PREFIXES)


def list_files(pattern: str, hidden: bool = False) -> Listing:
    """The files ``pattern`` names (an existing file or directory, else a glob); an empty listing if none."""
    fs, path = resolve(pattern)
    local = is_local(pattern)
    if any(c in path for c in GLOB_CHARS) and not fs.exists(path):
        found = fs.glob(path, detail=True)
        files = [p for p, info in found.items() if (os.path.isfile(p) if local else info.get("type") == "file")]
        return Listing(sorted(_local_info(pattern, p) if local else _info(pattern, p, found[p]) for p in files))
    if local and os.path.isdir(path):
        listing = Listing()
        _walk(pattern, path, path, os.path.realpath(path), hidden, listing)
    elif fs.isdir(path):
        listing = Listing()
        for p, info in fs.find(path, detail=True).items():
            parts = posixpath.relpath(p, path).split("/")
            cut = next((k for k, part in enumerate(parts) if is_hidden(part)), None)
            if cut is None or hidden:
                listing.files.append(_info(pattern, p, info))
            else:  # a hidden directory is one entry, however many files it holds
                listing.skipped.append("/".join(parts[: cut + 1]) + ("/" if cut < len(parts) - 1 else ""))
        listing.skipped = sorted(set(listing.skipped))
    elif local and os.path.lexists(path):
        return Listing([_local_info(pattern, path)])
    elif fs.exists(path):
        return Listing([_info(pattern, path, fs.info(path))])
    else:
        return Listing()
    listing.files.sort()
    return listing


def pattern_base(pattern: str) -> str:
    """The directory ``pattern`` names its files from, as a URL like theirs: an existing directory itself, an
    existing file's directory, a glob's directory before its first wildcard."""
    fs, path = resolve(pattern)
    if any(c in path for c in GLOB_CHARS) and not fs.exists(path):
        static = path[: min(path.find(c) for c in GLOB_CHARS if c in path)]
        base = static.rstrip("/") if static.endswith("/") else posixpath.dirname(static)
    elif os.path.isdir(path) if is_local(pattern) else fs.isdir(path):
        base = path.rstrip("/") or path
    else:
        base = posixpath.dirname(path)
    return unstrip(pattern, base)


def _info(template: str, path: str, info: dict) -> FileInfo:
    version = next((str(info[k]) for k in VERSION_KEYS if info.get(k) is not None), "")
    return FileInfo(unstrip(template, path), int(info.get("size") or 0), version)


def _local_info(template: str, path: str) -> FileInfo:
    try:
        st = os.stat(path)
    except OSError:  # a dangling link: listed, and reading it is one unreadable_file reject
        st = os.lstat(path)
    return FileInfo(unstrip(template, path), st.st_size, str(st.st_mtime_ns))


def _walk(template: str, root: str, directory: str, real: str, hidden: bool, listing: Listing) -> None:
    """Add the files below ``directory`` (whose resolved path is ``real``), following links to directories."""
    with os.scandir(directory) as entries:
        found = sorted(entries, key=lambda e: e.name)
    for entry in found:
        rel = os.path.relpath(entry.path, root)
        is_dir = entry.is_dir()  # follows links
        if not hidden and is_hidden(entry.name):
            listing.skipped.append(rel + ("/" if is_dir else ""))
        elif not is_dir:
            listing.files.append(_local_info(template, entry.path))
        else:
            target = os.path.realpath(entry.path)
            if entry.is_symlink() and (real == target or real.startswith(target.rstrip(os.sep) + os.sep)):
                listing.skipped.append(rel + "/")  # a loop: its files are read through the directory it names
            else:
                _walk(template, root, entry.path, target, hidden, listing)
