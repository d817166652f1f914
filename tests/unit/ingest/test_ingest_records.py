"""Records fail one at a time (issue 14): each bad record is a reject with its file, position and reason.

These run the ingest stage's Arrow body (`records_to_batches`) directly, without a SparkSession.
"""

from __future__ import annotations

import dataclasses
import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.config import SourceConfig
from pipeline.sources.batches import records_to_batches
from pipeline.sources.formats import FORMATS
from pipeline.sources.formats.base import SourceFile
from pipeline.sources.records import RecordRules
from pipeline.sources.splits import Split

RULES = RecordRules(text_field="text", keep_fields=("url", "score"), max_text_bytes=10_000, excerpt_chars=40)


def _run(split: Split, rules: RecordRules = RULES, unit: str = "line") -> list[dict]:
    """Every output row (documents and rejects) for one split, in reading order."""
    batch = pa.RecordBatch.from_pylist([split.as_row()])
    rows: list[dict] = []
    for out in records_to_batches(iter([batch]), {split.source: dataclasses.replace(rules, text_unit=unit)}):
        rows.extend(out.to_pylist())
    return rows


def _parquet_splits(path, rel: str) -> list[Split]:
    """The Parquet format's splits of one file, of about 1 kB each."""
    source = SourceConfig(name="s", paths=[str(path)], format="parquet")
    return FORMATS["parquet"].splits(SourceFile(source, str(path), rel, path.stat().st_size), 1024)


def _jsonl_split(tmp_path, lines: list[bytes], name: str = "data.jsonl", fmt: str = "jsonl") -> Split:
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return Split("s", fmt, str(path), name, 0, path.stat().st_size, None)


def _good(i: int) -> bytes:
    return json.dumps({"text": f"good record {i}", "url": f"u{i}"}).encode()


def _outcomes(rows: list[dict]) -> list[str | None]:
    return [r["reason"] for r in rows]


def test_huge_integer_rejects_that_record_only(tmp_path):
    huge = b'{"text": "has a huge number", "n": ' + b"9" * 5000 + b"}"
    rows = _run(_jsonl_split(tmp_path, [_good(0), huge, _good(1), _good(2)]))
    assert _outcomes(rows) == [None, "malformed_json", None, None]
    assert [r["text"] for r in rows if r["reason"] is None] == ["good record 0", "good record 1", "good record 2"]
    assert "digits" in rows[1]["detail"] and rows[1]["file"] == "data.jsonl" and rows[1]["position"] > 0


def test_deep_nesting_rejects_that_record_only(tmp_path):
    deep = b'{"text": "deep", "x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    rows = _run(_jsonl_split(tmp_path, [deep, _good(1)]))
    assert _outcomes(rows) == ["malformed_json", None]


def test_unexpected_parse_error_is_one_reject_not_the_rest_of_the_split(tmp_path, monkeypatch):
    import pipeline.sources.records as records

    real = records.parse_json_line

    def flaky(raw, rules):
        if b"boom" in raw:
            raise OverflowError("synthetic failure inside the parser")
        return real(raw, rules)

    monkeypatch.setattr(records, "parse_json_line", flaky)
    rows = _run(_jsonl_split(tmp_path, [_good(0), b'{"text": "boom"}', _good(1)]))
    assert _outcomes(rows) == [None, "unparseable_record", None]
    assert "OverflowError" in rows[1]["detail"]


def test_lone_surrogate_in_kept_field_is_a_reject_naming_the_field(tmp_path):
    bad = b'{"text": "fine text", "url": "http://x/\\ud800"}'
    rows = _run(_jsonl_split(tmp_path, [_good(0), bad, _good(1)]))
    assert _outcomes(rows) == [None, "invalid_utf8", None]
    assert "url" in rows[1]["detail"]


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_finite_number_in_kept_field_becomes_null_in_meta(tmp_path, literal):
    line = b'{"text": "a scored record", "score": ' + literal + b', "url": "u"}'
    rows = _run(_jsonl_split(tmp_path, [line]))
    assert _outcomes(rows) == [None]
    meta = json.loads(rows[0]["meta"], parse_constant=lambda c: pytest.fail(f"meta holds {c}"))
    assert meta == {"score": None, "url": "u"}


def test_nan_in_parquet_kept_field_gives_valid_meta(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"text": ["one", "two"], "score": [float("nan"), 1.5]}), path)
    rows = _run(Split("s", "parquet", str(path), "t.parquet", 0, 1, None))
    metas = [json.loads(r["meta"], parse_constant=lambda c: pytest.fail(f"meta holds {c}")) for r in rows]
    assert metas == [{"score": None}, {"score": 1.5}]


def test_bom_is_stripped_at_every_jsonl_line_start(tmp_path):
    bom = "\ufeff".encode()
    rows = _run(_jsonl_split(tmp_path, [bom + _good(0), _good(1), bom + _good(2)]))
    assert _outcomes(rows) == [None, None, None]
    assert [r["text"] for r in rows] == ["good record 0", "good record 1", "good record 2"]


def test_bom_in_gzip_jsonl_is_stripped(tmp_path):
    path = tmp_path / "d.jsonl.gz"
    path.write_bytes(gzip.compress("\ufeff".encode() + _good(0) + b"\n"))
    rows = _run(Split("s", "jsonl", str(path), path.name, 0, -1, "gzip"))
    assert _outcomes(rows) == [None]


def test_text_format_strips_a_leading_bom(tmp_path):
    lines = ["\ufefffirst line", "second line \ufeff inside"]
    rows = _run(_jsonl_split(tmp_path, [x.encode() for x in lines], name="t.txt", fmt="text"))
    assert [r["text"] for r in rows] == ["first line", "second line \ufeff inside"]
    whole = tmp_path / "w.txt"
    whole.write_bytes("\ufeffwhole file".encode())
    rows = _run(Split("s", "text", str(whole), "w.txt", 0, -1, None), unit="file")
    assert [r["text"] for r in rows] == ["whole file"]


def test_blank_jsonl_lines_are_empty_line_rejects(tmp_path):
    rows = _run(_jsonl_split(tmp_path, [_good(0), b"", b"  \t", b"\r", _good(1)]))
    assert _outcomes(rows) == [None, "empty_line", "empty_line", "empty_line", None]


def test_not_parquet_at_all_is_one_unreadable_file_reject(tmp_path):
    path = tmp_path / "fake.parquet"
    path.write_bytes(b"this is not parquet at all\n" * 10)
    splits = _parquet_splits(path, "fake.parquet")
    rows = [r for split in splits for r in _run(split)]
    assert _outcomes(rows) == ["unreadable_file"]
    assert rows[0]["file"] == "fake.parquet" and rows[0]["detail"]


def test_truncated_parquet_is_one_unreadable_file_reject(tmp_path):
    path = tmp_path / "cut.parquet"
    pq.write_table(pa.table({"text": [f"row {i}" for i in range(100)]}), path)
    path.write_bytes(path.read_bytes()[:-20])
    splits = _parquet_splits(path, "cut.parquet")
    rows = [r for split in splits for r in _run(split)]
    assert _outcomes(rows) == ["unreadable_file"]
    assert rows[0]["file"] == "cut.parquet"


def test_one_corrupt_row_group_is_one_reject_and_the_others_are_read(tmp_path):
    path = tmp_path / "rg.parquet"
    texts = [f"row {i} " + "abcdefghij"[i % 10] * 150 + str(i * 7919) for i in range(300)]
    pq.write_table(pa.table({"text": texts}), path, row_group_size=100, compression="snappy")
    chunk = pq.ParquetFile(path).metadata.row_group(1).column(0)
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
    data = bytearray(path.read_bytes())
    data[start : start + 64] = b"\x5a" * 64  # the column chunk's first page header is garbage
    path.write_bytes(bytes(data))
    rows = _run(Split("s", "parquet", str(path), "rg.parquet", 0, 3, None))
    assert [r["text"] for r in rows if r["reason"] is None] == texts[:100] + texts[200:]
    bad = [r for r in rows if r["reason"] is not None]
    assert [(r["reason"], r["position"]) for r in bad] == [("unreadable_file", 100)]
    assert "row group 1" in bad[0]["detail"] and "100 rows" in bad[0]["detail"]


def test_a_reject_detail_with_a_lone_surrogate_does_not_break_the_batch(tmp_path, monkeypatch):
    import pipeline.sources.records as records

    real = records.parse_json_line

    def echoing(raw, rules):
        if b"echo" in raw:
            raise ValueError("bad value '\ud800' in record")
        return real(raw, rules)

    monkeypatch.setattr(records, "parse_json_line", echoing)
    rows = _run(_jsonl_split(tmp_path, [b'{"text": "echo"}', _good(1)]))
    assert _outcomes(rows) == ["unparseable_record", None]
    assert "ValueError" in rows[0]["detail"]
