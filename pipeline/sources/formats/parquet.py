"""Parquet: one record per row, its text in column ``text_field``; splits are runs of row groups."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow.parquet as pq

from pipeline.sources.formats.base import Format, Record, SourceFile, Split
from pipeline.sources.records import Parsed, RecordRules, RejectReason, guarded, parse_mapping
from pipeline.storage import resolve


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


def read(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Rows of the split's row groups (``end == -1``: all of them); positions are row numbers. A file whose
    footer cannot be read raises (one ``unreadable_file`` reject); a row group that cannot be read is one
    ``unreadable_file`` reject at its first row, and reading goes on with the next row group."""
    fs, path = resolve(split.url)
    with fs.open(path, "rb") as f:
        pf = pq.ParquetFile(f)
        end = pf.metadata.num_row_groups if split.end == -1 else split.end
        row = sum(pf.metadata.row_group(g).num_rows for g in range(split.start))
        columns = [c for c in (rules.text_field, *rules.keep_fields) if c in pf.schema_arrow.names]
        for g in range(split.start, end):
            group_rows = pf.metadata.row_group(g).num_rows
            try:
                objs = pf.read_row_group(g, columns=columns).to_pylist()
            except Exception as exc:  # noqa: BLE001 - corrupt pages, bad compression, invalid UTF-8
                detail = f"row group {g} ({group_rows} rows): {type(exc).__name__}: {exc}"[:500]
                yield row, Parsed(reason=RejectReason.UNREADABLE_FILE, detail=detail), b""
                row += group_rows
                continue
            for obj in objs:
                raw = repr(obj.get(rules.text_field)).encode("utf-8", errors="replace")
                yield row, guarded(parse_mapping, obj, rules), raw
                row += 1


FORMAT = Format("parquet", splits, read)
