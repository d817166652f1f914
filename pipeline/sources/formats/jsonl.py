"""JSON Lines (also ``.gz`` / ``.zst``): one JSON object per line, its text in ``text_field``."""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.sources import records
from pipeline.sources.formats.base import Format, Record, Split
from pipeline.sources.formats.lines import line_splits, lines, too_large
from pipeline.sources.records import RecordRules, guarded


def read(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Every line of the split; positions are byte offsets (line numbers in a compressed file). A line over
    ``max_record_bytes`` is a ``record_too_large`` reject, never parsed."""
    for position, raw, size in lines(split, rules.max_record_bytes):
        if size > rules.max_record_bytes:
            yield position, too_large(size, rules.max_record_bytes), raw
            continue
        yield position, guarded(records.parse_json_line, raw, rules), raw


FORMAT = Format("jsonl", line_splits, read)
