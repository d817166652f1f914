"""Reading one split into records: (position, parsed outcome, raw excerpt source)."""

from __future__ import annotations

import io
from collections.abc import Iterator

from pipeline.ingest.records import Parsed, RecordRules, parse_json_line, parse_mapping, parse_text
from pipeline.ingest.splits import Split
from pipeline.storage import filesystem

Record = tuple[int, Parsed, bytes]


def read_split(split: Split, rules: RecordRules, text_unit: str = "line") -> Iterator[Record]:
    """Yield ``(position, parsed, raw)`` for every record of ``split``.

    Positions are byte offsets of line starts in uncompressed files, line numbers in compressed
    files, row numbers in Parquet files, and 0 for whole-file text records.
    """
    if split.format == "parquet":
        yield from _parquet_records(split, rules)
        return
    parse = (lambda raw: parse_json_line(raw, rules)) if split.format == "jsonl" else (
        lambda raw: parse_text(raw, rules))
    if split.format == "text" and text_unit == "file":
        with _open(split) as f:
            raw = f.read()
        yield 0, parse(raw), raw
        return
    for position, raw in _lines(split):
        yield position, parse(raw), raw


def _open(split: Split):
    fs, path = filesystem(split.url)
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
    import pyarrow.parquet as pq

    fs, path = filesystem(split.url)
    with fs.open(path, "rb") as f:
        pf = pq.ParquetFile(f)
        row = sum(pf.metadata.row_group(g).num_rows for g in range(split.start))
        columns = [c for c in (rules.text_field, *rules.keep_fields) if c in pf.schema_arrow.names]
        for g in range(split.start, split.end):
            table = pf.read_row_group(g, columns=columns)
            for obj in table.to_pylist():
                parsed = parse_mapping(obj, rules)
                raw = repr(obj.get(rules.text_field)).encode("utf-8", errors="replace")
                yield row, parsed, raw
                row += 1
