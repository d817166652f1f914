"""What the ``warc`` and ``wet`` formats share: byte-range splits of ``.gz`` files at gzip member starts, and
reading a split's records (docs/bad_input.md, Web archives)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from pipeline.sources.formats.base import Record, SourceFile, Split
from pipeline.sources.records import Parsed, RecordRules, RejectReason, guarded
from pipeline.sources.warc_framing import Member, gzip_members, plain_records
from pipeline.storage import resolve


def splits(file: SourceFile, split_bytes: int) -> list[Split]:
    """A gzip file (one member per record) in byte ranges of about ``split_bytes``: each task reads the members
    that start in its range. A plain WARC file is one split (its records cannot be found from the middle)."""
    if not file.url.endswith(".gz"):
        return [file.split(0, -1)]
    if file.size == 0:
        return [file.split(0, -1, "gzip")]
    n = max(1, math.ceil(file.size / split_bytes))
    step = math.ceil(file.size / n)
    return [file.split(a, min(a + step, file.size), "gzip") for a in range(0, file.size, step)]


def read_records(split: Split, rules: RecordRules, parse: Callable[[bytes, RecordRules], Parsed]) -> Iterator[Record]:
    """Every record of ``split`` parsed by ``parse``; positions are byte offsets of records in the file."""
    fs, path = resolve(split.url)
    with fs.open(path, "rb", block_size=4 * 1024 * 1024) as f:
        if split.compression == "gzip":
            members = gzip_members(f, split.start, None if split.end == -1 else split.end, rules.max_record_bytes)
        else:
            members = plain_records(f, rules.max_record_bytes)
        for member in members:
            yield member.position, _outcome(member, rules, parse), member.data[:4096]


def _outcome(member: Member, rules: RecordRules, parse: Callable[[bytes, RecordRules], Parsed]) -> Parsed:
    if member.error:
        return Parsed(reason=RejectReason.CORRUPT_RECORD, detail=member.error[:200])
    if member.too_large:
        return Parsed(reason=RejectReason.RECORD_TOO_LARGE, detail=f"{member.size} bytes > {rules.max_record_bytes}")
    return guarded(parse, member.data, rules)
