"""The files of decontamination's references, and what they were when a dedup ran (no Spark).

A reference's files are listed like a source's (``decontaminate.references.<i>.paths.<j>`` names a path that
matches nothing, before Spark starts). The dedup stage records each file's size and version (local
modification time, GCS generation, S3 ETag) in its counts; a resumed run compares them with a fresh
listing and recomputes the dedup when a reference gained, lost or changed a file
(docs/dedup_index.md, Decontamination).
"""

from __future__ import annotations

import posixpath
from typing import Any

from pipeline.config import PipelineConfig
from pipeline.sources.splits import source_files
from pipeline.storage import resolve

KEY = "decontaminate.references"
VERSION_FIELDS = ("generation", "ETag", "etag", "mtime", "LastModified", "updated")  # the first one a store gives


def reference_files(config: PipelineConfig) -> dict[str, list[str]]:
    """Every reference's files; a path matching nothing fails, naming ``decontaminate.references.<i>.paths.<j>``."""
    listings = source_files(config.decontaminate.references, KEY, config.ingest.include_hidden)
    return {name: [f.url for f in listing.files] for name, listing in listings.items()}


def reference_stamps(config: PipelineConfig) -> dict[str, dict[str, list[Any]]]:
    """Per reference, each file's ``[size, version]`` (what a change of its contents changes)."""
    stamps: dict[str, dict[str, list[Any]]] = {}
    for name, urls in reference_files(config).items():
        stamps[name] = {}
        for url in urls:
            fs, path = resolve(url)
            fs.invalidate_cache()
            info = fs.info(path)
            version = next((info[k] for k in VERSION_FIELDS if info.get(k) is not None), None)
            stamps[name][url] = [int(info.get("size") or 0), None if version is None else str(version)]
    return stamps


def changed_references(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What changed in each reference between two :func:`reference_stamps`, one phrase per reference."""
    changes = []
    for name in sorted(set(recorded) | set(now)):
        before, after = recorded.get(name) or {}, now.get(name) or {}
        parts = []
        for what, files in (
            ("added", sorted(set(after) - set(before))),
            ("removed", sorted(set(before) - set(after))),
            ("changed", sorted(u for u in set(before) & set(after) if list(before[u]) != list(after[u]))),
        ):
            if files:
                shown = ", ".join(posixpath.basename(f) for f in files[:3]) + (" ..." if len(files) > 3 else "")
                parts.append(f"{len(files)} file(s) {what}: {shown}")
        if parts:
            changes.append(f"decontamination reference {name!r} changed since the dedup ran ({'; '.join(parts)})")
    return changes
