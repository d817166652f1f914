"""Ingest kernels without Spark: record parsing, reject reasons, line splits, packing splits into tasks, doc ids."""

from __future__ import annotations

import gzip
import json

import pytest
import zstandard

from pipeline.config import IngestConfig
from pipeline.sources.doc_id import doc_id
from pipeline.sources.records import RecordRules, RejectReason, parse_json_line
from pipeline.sources.splits import OPEN_COST, Split, pack_splits, read_split

RULES = RecordRules(text_field="text", keep_fields=("url",), max_text_bytes=50, excerpt_chars=20)


@pytest.mark.parametrize(
    "line, reason",
    [
        (b'{"text": "unterminated', RejectReason.MALFORMED_JSON),
        (b"", RejectReason.EMPTY_LINE),
        (b"[1, 2]", RejectReason.NOT_AN_OBJECT),
        (b'{"body": "x"}', RejectReason.MISSING_TEXT_FIELD),
        (b'{"text": null}', RejectReason.MISSING_TEXT_FIELD),
        (b'{"text": 3}', RejectReason.NON_STRING_TEXT),
        (b'{"text": ["a"]}', RejectReason.NON_STRING_TEXT),
        (b'{"text": "caf\xe9"}', RejectReason.INVALID_UTF8),
        (b'{"text": "lone \\ud800 surrogate"}', RejectReason.INVALID_UTF8),
        (b'{"text": ""}', RejectReason.EMPTY_TEXT),
        (b'{"text": " \\n\\t "}', RejectReason.EMPTY_TEXT),
        (b'{"text": "' + b"x" * 51 + b'"}', RejectReason.TEXT_TOO_LARGE),
    ],
)
def test_each_reject_reason(line, reason):
    assert parse_json_line(line, RULES).reason is reason


def test_good_record_keeps_configured_fields_only():
    parsed = parse_json_line(b'{"text": "caf\xc3\xa9 ok", "url": "u", "other": 1}', RULES)
    assert parsed.reason is None and parsed.text == "café ok"
    assert json.loads(parsed.meta) == {"url": "u"}


def _lines_file(tmp_path, n=200):
    lines = [json.dumps({"text": f"document number {i} " + "w" * (i % 17)}) for i in range(n)]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, lines


@pytest.mark.parametrize("split_size", [1, 7, 64, 1000, 10**9])
def test_byte_splits_cover_every_line_exactly_once(tmp_path, split_size):
    path, lines = _lines_file(tmp_path)
    size = path.stat().st_size
    seen = []
    for start in range(0, size, split_size):
        split = Split("s", "jsonl", str(path), "data.jsonl", start, min(start + split_size, size), None)
        seen += [(pos, p.text) for pos, p, _ in read_split(split, RULES)]
    whole = Split("s", "jsonl", str(path), "data.jsonl", 0, size, None)
    expected = [(pos, p.text) for pos, p, _ in read_split(whole, RULES)]
    assert len(expected) == len(lines)
    assert seen == expected
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    assert [pos for pos, _ in expected] == offsets


@pytest.mark.parametrize("suffix, compression", [(".gz", "gzip"), (".zst", "zstd")])
def test_compressed_files_give_the_same_texts(tmp_path, suffix, compression):
    path, lines = _lines_file(tmp_path, 50)
    packed = tmp_path / f"data.jsonl{suffix}"
    data = path.read_bytes()
    packed.write_bytes(gzip.compress(data) if compression == "gzip" else zstandard.ZstdCompressor().compress(data))
    split = Split("s", "jsonl", str(packed), packed.name, 0, -1, compression)
    texts = [p.text for _, p, _ in read_split(split, RULES)]
    assert texts == [json.loads(line)["text"] for line in lines]


def test_doc_id_is_signed_64_bit_and_depends_on_every_part():
    ids = {doc_id("a", "f", 0), doc_id("b", "f", 0), doc_id("a", "g", 0), doc_id("a", "f", 1)}
    assert len(ids) == 4
    assert all(-(2**63) <= i < 2**63 for i in ids)
    assert doc_id("a", "f", 0) == doc_id("a", "f", 0)


def _sized(*sizes: int) -> list[Split]:
    return [Split("web", "jsonl", f"/d/{i}.jsonl", f"{i}.jsonl", 0, -1, None, size) for i, size in enumerate(sizes)]


def test_small_splits_share_tasks_and_large_ones_stay_alone():
    mb = 1 << 20
    splits = _sized(*[500] * 10, 40 * mb, 40 * mb, *[500] * 3)
    tasks = pack_splits(splits, IngestConfig(split_bytes=64 * mb))
    assert [len(t) for t in tasks] == [11, 4]  # ten small files and a large one; the other and the rest
    assert [s for t in tasks for s in t] == splits
    per_task = (64 * mb) // (500 + OPEN_COST)
    assert len(pack_splits(_sized(*[500] * 5000), IngestConfig())) == -(-5000 // per_task)
    assert [len(t) for t in pack_splits(_sized(10, 10, 10), IngestConfig(split_bytes=64))] == [1, 1, 1]


def test_partitions_gives_at_most_that_many_tasks_in_order():
    splits = _sized(*[100] * 9)
    for n in (1, 2, 3, 7, 20):
        tasks = pack_splits(splits, IngestConfig(partitions=n))
        assert len(tasks) == min(n, 9) and [s for t in tasks for s in t] == splits
    assert pack_splits([], IngestConfig(partitions=3)) == []
