"""Planning input splits on the driver: which byte ranges or row groups each task reads."""

from __future__ import annotations

import math
import posixpath
from dataclasses import asdict, dataclass

from pipeline.config import ConfigError, PipelineConfig, SourceConfig
from pipeline.storage import expand, resolve

COMPRESSED_SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}


@dataclass(frozen=True)
class Split:
    """One unit of reading work. Byte range [start, end) for splittable files; row groups for Parquet;
    ``end == -1`` means the whole (compressed or whole-file) input."""

    source: str
    format: str
    url: str
    rel_path: str
    start: int
    end: int
    compression: str | None

    def as_row(self) -> dict:
        return asdict(self)


def compression_of(url: str) -> str | None:
    """'gzip', 'zstd' or None, from the file name."""
    for suffix, name in COMPRESSED_SUFFIXES.items():
        if url.endswith(suffix):
            return name
    return None


def source_files(config: PipelineConfig) -> dict[str, list[str]]:
    """Every source's input files; a source whose paths match nothing fails, naming the key."""
    files: dict[str, list[str]] = {}
    for i, src in enumerate(config.sources):
        found: list[str] = []
        for j, pattern in enumerate(src.paths):
            try:
                matched = expand(pattern)
            except Exception as exc:  # permission, missing bucket, unreachable endpoint
                raise ConfigError(f"sources.{i}.paths.{j}", f"cannot list {pattern!r}: {exc}") from None
            if not matched:
                raise ConfigError(f"sources.{i}.paths.{j}", f"no input files match {pattern!r}")
            found.extend(matched)
        files[src.name] = sorted(set(found))
    return files


def _base_dir(urls: list[str]) -> str:
    dirs = [posixpath.dirname(u) for u in urls]
    return posixpath.commonpath(dirs) if len(dirs) > 1 else dirs[0]


def plan_splits(config: PipelineConfig, files: dict[str, list[str]]) -> list[Split]:
    """Cut every input file into splits of about ``split_bytes`` (or ``partitions`` splits in all)."""
    sizes = {url: resolve(url)[0].size(resolve(url)[1]) for urls in files.values() for url in urls}
    split_bytes = config.ingest.split_bytes
    if config.ingest.partitions:
        split_bytes = max(1, math.ceil(sum(sizes.values()) / config.ingest.partitions))
    splits: list[Split] = []
    for src in config.sources:
        urls = files[src.name]
        base = _base_dir(urls)
        for url in urls:
            rel = posixpath.relpath(url, base) if url != base else posixpath.basename(url)
            splits.extend(_file_splits(src, url, rel, sizes[url], split_bytes))
    return splits


def _file_splits(src: SourceConfig, url: str, rel: str, size: int, split_bytes: int) -> list[Split]:
    comp = compression_of(url)
    if src.format == "parquet":
        return _parquet_splits(src, url, rel, split_bytes)
    if comp is not None or src.format == "text" and src.text_unit == "file" or size == 0:
        return [Split(src.name, src.format, url, rel, 0, -1, comp)]
    n = max(1, math.ceil(size / split_bytes))
    step = math.ceil(size / n)
    return [Split(src.name, src.format, url, rel, a, min(a + step, size), None) for a in range(0, size, step)]


def _parquet_splits(src: SourceConfig, url: str, rel: str, split_bytes: int) -> list[Split]:
    """Group consecutive row groups into splits of about ``split_bytes``; start/end are row-group numbers.

    A file whose footer cannot be read (not Parquet, truncated) is one whole-file split: reading it
    again on an executor fails there and becomes one ``unreadable_file`` reject naming the file.
    """
    import pyarrow.parquet as pq

    fs, path = resolve(url)
    try:
        with fs.open(path, "rb") as f:
            meta = pq.ParquetFile(f).metadata
    except Exception:  # noqa: BLE001 - ArrowInvalid, OSError: reported per file by the ingest stage
        return [Split(src.name, "parquet", url, rel, 0, -1, None)]
    splits, first, acc = [], 0, 0
    for g in range(meta.num_row_groups):
        acc += meta.row_group(g).total_byte_size
        if acc >= split_bytes:
            splits.append(Split(src.name, "parquet", url, rel, first, g + 1, None))
            first, acc = g + 1, 0
    if first < meta.num_row_groups or not splits:
        splits.append(Split(src.name, "parquet", url, rel, first, meta.num_row_groups, None))
    return splits
