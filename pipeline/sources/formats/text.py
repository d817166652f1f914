"""Plain UTF-8 text: one record per line, or per whole file (``text_unit: file``)."""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.sources import records
from pipeline.sources.formats.base import Format, Record, SourceFile, Split
from pipeline.sources.formats.lines import line_splits, lines, open_split, whole_file_split
from pipeline.sources.records import RecordRules, guarded


def splits(file: SourceFile, split_bytes: int) -> list[Split]:
    """Byte ranges of lines, or the whole file when each file is one record."""
    return whole_file_split(file) if file.source.text_unit == "file" else line_splits(file, split_bytes)


def read(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Every line (a leading BOM of the file dropped), or the whole file at position 0."""
    if rules.text_unit == "file":
        with open_split(split) as f:
            raw = f.read()
        yield 0, guarded(records.parse_text, raw, rules, True), raw
        return
    for position, raw in lines(split):
        yield position, guarded(records.parse_text, raw, rules, position == 0), raw


FORMAT = Format("text", splits, read)
