"""Planning input splits on the driver (which byte ranges or row groups each task reads), and reading one.

The sources are any list of source-like configs: ingest's ``sources`` or decontamination's
``decontaminate.references``; ``key`` is that list's config key, which errors name.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from pipeline.config import ConfigError, IngestConfig, SourceConfig
from pipeline.sources.formats import FORMATS
from pipeline.sources.formats.base import Record, SourceFile, Split
from pipeline.sources.records import RecordRules
from pipeline.storage import FileInfo, list_files
from pipeline.storage.listing import pattern_base

__all__ = ["OPEN_COST", "SourceListing", "Split", "pack_splits", "plan_splits", "read_split", "source_files"]

# what opening one more file costs a task, in bytes read (packing small files into tasks)
OPEN_COST = 256 * 1024


@dataclass
class SourceListing:
    """One source's input files (sorted, each once) and the names its directory listings left out."""

    files: list[FileInfo] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # relative to the listed directory; a directory ends with /
    base: str = ""  # the source's base directory: that of its one path, else the deepest one all its paths share

    def relative(self) -> dict[str, FileInfo]:
        """Each file by its path relative to the source's base directory (what doc ids and rejects name): it
        depends on the configured paths, not on which files they hold."""
        base = self.base or (_base_dir([f.url for f in self.files]) if self.files else "")
        return {(posixpath.relpath(f.url, base) if f.url != base else posixpath.basename(f.url)): f for f in self.files}


def source_files(
    sources: Sequence[SourceConfig], key: str = "sources", include_hidden: bool = False
) -> dict[str, SourceListing]:
    """Every source's input files (docs/bad_input.md, Files); a source whose paths match nothing fails, naming
    ``<key>.<i>.paths.<j>``."""
    found: dict[str, SourceListing] = {}
    for i, src in enumerate(sources):
        files: dict[str, FileInfo] = {}
        skipped: list[str] = []
        bases: list[str] = []
        for j, pattern in enumerate(src.paths):
            try:
                listing = list_files(pattern, include_hidden)
            except Exception as exc:  # permission, missing bucket, unreachable endpoint
                raise ConfigError(f"{key}.{i}.paths.{j}", f"cannot list {pattern!r}: {exc}") from None
            if not listing.files:
                raise ConfigError(f"{key}.{i}.paths.{j}", _nothing_matches(pattern, listing.skipped))
            files.update((f.url, f) for f in listing.files)
            skipped.extend(listing.skipped)
            bases.append(pattern_base(pattern))
        base = bases[0] if len(set(bases)) == 1 else _common(bases)
        found[src.name] = SourceListing(sorted(files.values()), skipped, base)
    return found


def _nothing_matches(pattern: str, skipped: list[str]) -> str:
    why = f"no input files match {pattern!r}"
    if skipped:
        why += f" (left out as hidden: {', '.join(skipped[:3])}; ingest.include_hidden: true reads them)"
    if "[" in pattern:
        why += "; a path that does not exist is a glob, where [[] matches a literal ["
    return why


def _common(urls: list[str]) -> str:
    """The deepest directory the URLs share (with their scheme)."""
    scheme = urls[0].split("://", 1)[0] + "://" if "://" in urls[0] else ""
    shared = posixpath.commonpath([u.split("://", 1)[-1] for u in urls])
    return scheme + shared


def _base_dir(urls: list[str]) -> str:
    dirs = [posixpath.dirname(u) for u in urls]
    return posixpath.commonpath(dirs) if len(dirs) > 1 else dirs[0]


def plan_splits(sources: Sequence[SourceConfig], ingest: IngestConfig, files: dict[str, SourceListing]) -> list[Split]:
    """Cut every input file into splits of about ``ingest.split_bytes`` (or ``ingest.partitions`` splits in all),
    each file by its source's format; sizes come from the listing."""
    split_bytes = ingest.split_bytes
    if ingest.partitions:
        total = sum(f.size for listing in files.values() for f in listing.files)
        split_bytes = max(1, math.ceil(total / ingest.partitions))
    splits: list[Split] = []
    for src in sources:
        cut = FORMATS[src.format].splits
        for rel, info in files[src.name].relative().items():
            splits.extend(cut(SourceFile(src, info.url, rel, info.size), split_bytes))
    return splits


def pack_splits(splits: Sequence[Split], ingest: IngestConfig) -> list[list[Split]]:
    """The splits grouped into tasks, in order: consecutive splits until a task holds about ``ingest.split_bytes``
    (``ingest.partitions``: that many tasks of about equal bytes), each split counting its bytes plus
    ``OPEN_COST``. A split of a large file fills a task alone; many small files share one (docs/stages.md,
    doc_id: ids do not depend on it)."""
    weights = [s.size + OPEN_COST for s in splits]
    if ingest.partitions:
        n, total = min(ingest.partitions, len(splits)), sum(weights)
        groups: list[list[Split]] = [[] for _ in range(n)]
        start = 0
        for split, weight in zip(splits, weights, strict=True):
            groups[min(n - 1, start * n // total)].append(split)
            start += weight
        return [g for g in groups if g]
    tasks: list[list[Split]] = []
    held = 0
    for split, weight in zip(splits, weights, strict=True):
        if not tasks or held + weight > ingest.split_bytes:
            tasks.append([])
            held = 0
        tasks[-1].append(split)
        held += weight
    return tasks


def read_split(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Every record of ``split`` as ``(position, parsed, raw)``, read by its format
    (:class:`~pipeline.sources.formats.base.Format`)."""
    return FORMATS[split.format].read(split, rules)
