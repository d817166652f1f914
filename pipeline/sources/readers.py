"""Reading one split into records: (position, parsed outcome, raw excerpt source)."""

from __future__ import annotations

import io
from collections.abc import Iterator

from pipeline.sources import records
from pipeline.sources.records import Parsed, RecordRules, RejectReason, parse_mapping
from pipeline.sources.splits import Split
from pipeline.storage import resolve

Record = tuple[int, Parsed, bytes]


def read_split(split: Split, rules: RecordRules, text_unit: str = "line") -> Iterator[Record]:
    """Yield ``(position, parsed, raw)`` for every record of ``split``.

    Positions are byte offsets of line starts in uncompressed files, line numbers in compressed
    files, row numbers in Parquet files, and 0 for whole-file text records. A record that cannot be
    parsed is a reject of that record only; an exception here means the file could not be read on.
    """
    if split.format == "parquet":
        yield from _parquet_records(split, rules)
        return
    if split.format == "text" and text_unit == "file":
        with _open(split) as f:
            raw = f.read()
        yield 0, _parse_one(split.format, raw, rules, True), raw
        return
    for position, raw in _lines(split):
        yield position, _parse_one(split.format, raw, rules, position == 0), raw


def _parse_one(fmt: str, raw: bytes, rules: RecordRules, file_start: bool) -> Parsed:
    """One record's outcome; an unexpected error while parsing it is a reject of that record alone."""
    try:
        if fmt == "jsonl":
            return records.parse_json_line(raw, rules)
        return records.parse_text(raw, rules, strip_bom=file_start)
    except Exception as exc:  # noqa: BLE001 - never let one record take the rest of its split with it
        return Parsed(reason=RejectReason.UNPARSEABLE_RECORD, detail=f"{type(exc).__name__}: {exc}"[:200])


def _open(split: Split):
    fs, path = resolve(split.url)
    raw = fs.open(path, "rb", block_size=4 * 1024 * 1024)
    if split.compression == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if split.compression == "zstd":
        import zstandard

        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, closefd=True))
    return raw


def _strip_eol(line: bytes) -> bytes:
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
    return line


def _lines(split: Split) -> Iterator[tuple[int, bytes]]:
    """Lines starting in [start, end) (Hadoop line-split rule), or every line of a whole file."""
    with _open(split) as f:
        if split.end == -1:
            for number, line in enumerate(f):
                yield number, _strip_eol(line)
            return
        pos = split.start
        if pos > 0:
            f.seek(pos - 1)
            pos += len(f.readline()) - 1  # finish the line that straddles the split start
        while pos < split.end:
            line = f.readline()
            if not line:
                break
            yield pos, _strip_eol(line)
            pos += len(line)


def _parquet_records(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Rows of the split's row groups (``end == -1``: all of them). A file whose footer cannot be read
    raises (one ``unreadable_file`` reject); a row group that cannot be read is one ``unreadable_file``
    reject at its first row, and reading goes on with the next row group."""
    import pyarrow.parquet as pq

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
                yield row, _parse_row(obj, rules), repr(obj.get(rules.text_field)).encode("utf-8", errors="replace")
                row += 1


def _parse_row(obj: dict, rules: RecordRules) -> Parsed:
    try:
        return parse_mapping(obj, rules)
    except Exception as exc:  # noqa: BLE001 - one row, one reject
        return Parsed(reason=RejectReason.UNPARSEABLE_RECORD, detail=f"{type(exc).__name__}: {exc}"[:200])
