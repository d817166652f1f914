"""Parquet: one record per row, its text in column ``text_field``; splits are runs of row groups. A row group is
read in batches of rows, and one holding a page that inflates to more than the record size limit is not read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

import pyarrow.parquet as pq

from pipeline.sources.formats.base import Format, Record, SourceFile, Split
from pipeline.sources.parquet_pages import page_sizes
from pipeline.sources.records import Parsed, RecordRules, RejectReason, guarded, parse_mapping
from pipeline.storage import resolve

BATCH_ROWS = 1024  # rows of a batch at most; fewer when the row group's rows are large (about max_record_bytes)


def splits(file: SourceFile, split_bytes: int) -> list[Split]:
    """Group consecutive row groups into splits of about ``split_bytes``; start/end are row-group numbers.

    A file whose footer cannot be read (not Parquet, truncated) is one whole-file split: reading it
    again on an executor fails there and becomes one ``unreadable_file`` reject naming the file.
    """
    fs, path = resolve(file.url)
    try:
        with fs.open(path, "rb") as f:
            meta = pq.ParquetFile(f).metadata
    except Exception:  # noqa: BLE001 - ArrowInvalid, OSError: reported per file by the reading task
        return [file.split(0, -1)]
    # a split's size is its share of the file's bytes (row group sizes are uncompressed)
    total = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups)) or 1
    found, first, acc = [], 0, 0
    for g in range(meta.num_row_groups):
        acc += meta.row_group(g).total_byte_size
        if acc >= split_bytes:
            found.append(file.split(first, g + 1, size=file.size * acc // total))
            first, acc = g + 1, 0
    if first < meta.num_row_groups or not found:
        found.append(file.split(first, meta.num_row_groups, size=file.size * acc // total))
    return found


def _chunks(meta: pq.FileMetaData, group: int, columns: list[str]) -> list[pq.ColumnChunkMetaData]:
    """The column chunks of the row group that ``columns`` read (every leaf of a nested column)."""
    rg = meta.row_group(group)
    return [rg.column(i) for i in range(rg.num_columns) if rg.column(i).path_in_schema.split(".")[0] in columns]


def _oversized_page(f: IO[bytes], chunks: list[pq.ColumnChunkMetaData], limit: int) -> str | None:
    """Which page of the chunks inflates to more than ``limit`` bytes (None: none does); the page headers are read
    only when the chunks hold more than ``limit`` bytes in all."""
    if sum(c.total_uncompressed_size for c in chunks) <= limit:
        return None
    for chunk in chunks:
        for n, size in enumerate(page_sizes(f, chunk)):
            if size > limit:
                return f"page {n} of column {chunk.path_in_schema!r} inflates to {size} bytes > {limit}"
    return None


def read(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Rows of the split's row groups (``end == -1``: all of them); positions are row numbers. A file whose
    footer cannot be read raises (one ``unreadable_file`` reject); a row group that cannot be read is one
    ``unreadable_file`` reject at its first row (or at the row where it failed), and reading goes on with the next
    row group. A row group holding a page that inflates to more than ``max_record_bytes`` is not read: each of its
    rows is a ``record_too_large`` reject naming the page."""
    fs, path = resolve(split.url)
    limit = rules.max_record_bytes
    with fs.open(path, "rb") as f, fs.open(path, "rb") as headers:
        pf = pq.ParquetFile(f)
        end = pf.metadata.num_row_groups if split.end == -1 else split.end
        row = sum(pf.metadata.row_group(g).num_rows for g in range(split.start))
        columns = [c for c in (rules.text_field, *rules.keep_fields) if c in pf.schema_arrow.names]
        for g in range(split.start, end):
            group_rows = pf.metadata.row_group(g).num_rows
            first = row
            try:
                chunks = _chunks(pf.metadata, g, columns)
                oversized = _oversized_page(headers, chunks, limit)
                if oversized is not None:
                    for _ in range(group_rows):
                        yield (
                            row,
                            Parsed(reason=RejectReason.RECORD_TOO_LARGE, detail=f"row group {g}: {oversized}"),
                            b"",
                        )
                        row += 1
                    continue
                held = sum(c.total_uncompressed_size for c in chunks)
                batch = max(1, min(BATCH_ROWS, group_rows * limit // max(1, held)))
                for part in pf.iter_batches(batch_size=batch, row_groups=[g], columns=columns, use_threads=False):
                    for obj in part.to_pylist():
                        raw = repr(obj.get(rules.text_field))[:4096].encode("utf-8", errors="replace")
                        yield row, guarded(parse_mapping, obj, rules), raw
                        row += 1
            except Exception as exc:  # noqa: BLE001 - corrupt pages, bad compression, invalid UTF-8
                detail = f"row group {g} ({group_rows} rows): {type(exc).__name__}: {exc}"[:500]
                yield row, Parsed(reason=RejectReason.UNREADABLE_FILE, detail=detail), b""
                row = first + group_rows


FORMAT = Format("parquet", splits, read)
