"""Stable 64-bit document ids from (source, file, position) — never from partitioning."""

from __future__ import annotations

import xxhash


def doc_id(source: str, file: str, position: int) -> int:
    """Signed 64-bit id (a Spark ``long``) of the record at ``position`` of ``file`` in ``source``.

    ``file`` is the path relative to the source's base directory, so the same data read from a local
    disk, gs:// or s3:// gets the same ids.
    """
    key = f"{source}\x1f{file}\x1f{position}".encode()
    value = xxhash.xxh64_intdigest(key)
    return value - (1 << 64) if value >= (1 << 63) else value
