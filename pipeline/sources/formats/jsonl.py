"""JSON Lines (also ``.gz`` / ``.zst``): one JSON object per line, its text in ``text_field``."""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.sources import records
from pipeline.sources.formats.base import Format, Record, Split
from pipeline.sources.formats.lines import line_splits, lines
from pipeline.sources.records import RecordRules, guarded


def read(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Every line of the split; positions are byte offsets (line numbers in a compressed file)."""
    for position, raw in lines(split):
        yield position, guarded(records.parse_json_line, raw, rules), raw


FORMAT = Format("jsonl", line_splits, read)
