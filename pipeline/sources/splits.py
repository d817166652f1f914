"""Planning input splits on the driver (which byte ranges or row groups each task reads), and reading one.

The sources are any list of source-like configs: ingest's ``sources`` or decontamination's
``decontaminate.references``; ``key`` is that list's config key, which errors name.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Iterator, Sequence

from pipeline.config import ConfigError, IngestConfig, SourceConfig
from pipeline.sources.formats import FORMATS
from pipeline.sources.formats.base import Record, SourceFile, Split
from pipeline.sources.records import RecordRules
from pipeline.storage import expand, resolve

__all__ = ["Split", "plan_splits", "read_split", "source_files"]


def source_files(sources: Sequence[SourceConfig], key: str = "sources") -> dict[str, list[str]]:
    """Every source's input files; a source whose paths match nothing fails, naming ``<key>.<i>.paths.<j>``."""
    files: dict[str, list[str]] = {}
    for i, src in enumerate(sources):
        found: list[str] = []
        for j, pattern in enumerate(src.paths):
            try:
                matched = expand(pattern)
            except Exception as exc:  # permission, missing bucket, unreachable endpoint
                raise ConfigError(f"{key}.{i}.paths.{j}", f"cannot list {pattern!r}: {exc}") from None
            if not matched:
                raise ConfigError(f"{key}.{i}.paths.{j}", f"no input files match {pattern!r}")
            found.extend(matched)
        files[src.name] = sorted(set(found))
    return files


def _base_dir(urls: list[str]) -> str:
    dirs = [posixpath.dirname(u) for u in urls]
    return posixpath.commonpath(dirs) if len(dirs) > 1 else dirs[0]


def plan_splits(sources: Sequence[SourceConfig], ingest: IngestConfig, files: dict[str, list[str]]) -> list[Split]:
    """Cut every input file into splits of about ``ingest.split_bytes`` (or ``ingest.partitions`` splits in all),
    each file by its source's format."""
    sizes = {url: resolve(url)[0].size(resolve(url)[1]) for urls in files.values() for url in urls}
    split_bytes = ingest.split_bytes
    if ingest.partitions:
        split_bytes = max(1, math.ceil(sum(sizes.values()) / ingest.partitions))
    splits: list[Split] = []
    for src in sources:
        urls = files[src.name]
        base = _base_dir(urls)
        cut = FORMATS[src.format].splits
        for url in urls:
            rel = posixpath.relpath(url, base) if url != base else posixpath.basename(url)
            splits.extend(cut(SourceFile(src, url, rel, sizes[url]), split_bytes))
    return splits


def read_split(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Every record of ``split`` as ``(position, parsed, raw)``, read by its format
    (:class:`~pipeline.sources.formats.base.Format`)."""
    return FORMATS[split.format].read(split, rules)
