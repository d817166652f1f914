"""Plain UTF-8 text: one record per line, or per whole file (``text_unit: file``)."""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.sources import records
from pipeline.sources.formats.base import Format, Record, SourceFile, Split
from pipeline.sources.formats.lines import KEPT, line_splits, lines, open_split, too_large, whole_file_split
from pipeline.sources.records import Parsed, RecordRules, RejectReason, guarded


def splits(file: SourceFile, split_bytes: int) -> list[Split]:
    """Byte ranges of lines, or the whole file when each file is one record."""
    return whole_file_split(file) if file.source.text_unit == "file" else line_splits(file, split_bytes)


def read(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Every line (a leading BOM of the file dropped), or the whole file at position 0. A record over
    ``max_record_bytes`` is a ``record_too_large`` reject: of a file, only that many bytes are read."""
    limit = rules.max_record_bytes
    if rules.text_unit == "file":
        with open_split(split) as f:
            raw = f.read(limit + 1)
        if len(raw) > limit:
            yield 0, Parsed(reason=RejectReason.RECORD_TOO_LARGE, detail=f"more than {limit} bytes"), raw[:KEPT]
            return
        yield 0, guarded(records.parse_text, raw, rules, True), raw
        return
    for position, raw, size in lines(split, limit):
        if size > limit:
            yield position, too_large(size, limit), raw
            continue
        yield position, guarded(records.parse_text, raw, rules, position == 0), raw


FORMAT = Format("text", splits, read)
