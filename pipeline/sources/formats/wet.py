"""WET (``.warc.wet.gz``): Common Crawl's extracted text, one ``conversion`` record per page
(docs/bad_input.md, Web archives)."""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.sources.formats.base import Format, Record, Split
from pipeline.sources.formats.warc_common import read_records, splits
from pipeline.sources.records import RecordRules
from pipeline.sources.web import parse_wet_record


def read(split: Split, rules: RecordRules) -> Iterator[Record]:
    """Every record of the split; positions are the records' byte offsets in the file."""
    return read_records(split, rules, parse_wet_record)


FORMAT = Format("wet", splits, read, web=True)
