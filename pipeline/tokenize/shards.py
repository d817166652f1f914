"""The shard directory's layout: ``shards/<source>/part-NNNNN.{bin,idx}``, attempts under ``shards/_tmp/``.

Shared by the tokenize stage (which writes shards) and the merge (which reads them).
"""

from __future__ import annotations

import posixpath
import re

from pipeline import storage

SHARD_RE = re.compile(r"^part-(\d{5})\.(bin|idx)$")


def shard_dir(run_dir: str, source: str) -> str:
    """``<run>/shards/<source>``."""
    return storage.join(run_dir, "shards", source)


def tmp_dir(run_dir: str, source: str) -> str:
    """``<run>/shards/_tmp/<source>``: where task attempts write before publishing."""
    return storage.join(run_dir, "shards", "_tmp", source)


def shard_name(partition: int) -> str:
    """Zero-padded shard name of a partition (lexicographic order = partition order)."""
    return f"part-{partition:05d}"


def list_shards(directory: str) -> tuple[list[int], list[str]]:
    """Partition numbers with a complete ``.bin``/``.idx`` pair, sorted; and every other file name."""
    fs, path = storage.resolve(directory)
    if not fs.exists(path):
        return [], []
    names = sorted(posixpath.basename(p.rstrip("/")) for p in fs.ls(path, detail=False))
    found: dict[int, set[str]] = {}
    stray = []
    for n in names:
        m = SHARD_RE.match(n)
        if m:
            found.setdefault(int(m.group(1)), set()).add(m.group(2))
        else:
            stray.append(n)
    pairs = sorted(p for p, exts in found.items() if exts == {"bin", "idx"})
    stray += [f"{shard_name(p)}.{e}" for p, exts in sorted(found.items()) if exts != {"bin", "idx"} for e in exts]
    return pairs, stray
