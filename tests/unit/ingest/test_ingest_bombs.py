"""Decompression bombs in every input format (docs/bad_input.md, Records): a record that inflates to far more
than ``ingest.max_record_bytes`` is a ``record_too_large`` reject, the next record is read, and the reading process
never holds the record whole. Each bomb here is BOMB bytes in well under 1 MB on disk, read with a 1 MB limit in a
child process whose peak RSS (``VmHWM``) is compared with the same reader on a small file of that format."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

BOMB = 200 * 1024 * 1024
LIMIT = 1024 * 1024
PIECE = b"a" * (1 << 20)
MARGIN = 64 * 1024 * 1024  # a bomb's reader may take this much more memory than a small file's; the bomb is 200 MB

READER = r"""
import json, os, sys
from pipeline.config import SourceConfig
from pipeline.sources.formats import FORMATS
from pipeline.sources.formats.base import SourceFile
from pipeline.sources.records import RecordRules

path, fmt, limit, unit = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
src = SourceConfig(name="s", paths=[path], format=fmt, text_unit=unit)
file = SourceFile(src, path, os.path.basename(path), os.path.getsize(path))
rules = RecordRules(max_record_bytes=limit, text_unit=unit)
splits = FORMATS[fmt].splits(file, 1 << 40)
reasons = [p.reason.value if p.reason else None for s in splits for _, p, _ in FORMATS[fmt].read(s, rules)]
# VmHWM: this process's peak RSS since its exec (ru_maxrss would carry the forking pytest process's peak over)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) * 1024
print(json.dumps({"reasons": reasons, "peak": peak}))
"""


def _read(path: Path, fmt: str, unit: str = "line") -> tuple[list[str | None], int]:
    """(reasons of the records, peak RSS in bytes) of a fresh process reading ``path``."""
    done = subprocess.run(
        [sys.executable, "-c", READER, str(path), fmt, str(LIMIT), unit],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["reasons"], out["peak"]


def _write_many(f, times: int) -> None:
    for _ in range(times):
        f.write(PIECE)


def _lines(path: Path, before: bytes, after: bytes, bomb: bool, compression: str) -> None:
    opener = gzip.open if compression == "gzip" else None
    with open(path, "wb") as raw:
        f = opener(raw, "wb", compresslevel=6) if opener else zstandard.ZstdCompressor(level=3).stream_writer(raw)
        f.write(before)
        if bomb:
            _write_many(f, BOMB >> 20)
        else:
            f.write(b"second")
        f.write(after)
        f.close()


def _warc_record(kind: str, body_size: int, body: bytes = b"") -> tuple[bytes, bytes]:
    """(header, tail) of a record whose block is ``body`` or ``body_size`` bytes written between them."""
    payload_head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" if kind == "response" else b""
    size = len(payload_head) + (len(body) if not body_size else body_size)
    ctype = b"application/http; msgtype=response" if kind == "response" else b"text/plain"
    head = (
        b"WARC/1.0\r\nWARC-Type: %s\r\nWARC-Target-URI: http://x.test/%d\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n"
        b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-%012d>\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
        % (kind.encode(), size, size, ctype, size)
    )
    return head + payload_head + body, b"\r\n\r\n"


def _warc(path: Path, kind: str, bomb: bool) -> None:
    page = b"<html><body><p>A page of text.</p></body></html>" if kind == "response" else b"A page of text."
    with open(path, "wb") as raw:
        for n in range(3):
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as f:
                if n == 1 and bomb:
                    head, tail = _warc_record(kind, BOMB)
                    f.write(head)
                    _write_many(f, BOMB >> 20)
                    f.write(tail)
                else:
                    head, tail = _warc_record(kind, 0, page)
                    f.write(head + tail)


def _parquet(path: Path, bomb: bool) -> None:
    texts = ["A page of text.", "a" * BOMB if bomb else "Another page.", "A third page."]
    pq.write_table(pa.table({"text": texts}), path, row_group_size=1, compression="zstd")


def _build(tmp: Path, case: str, bomb: bool) -> tuple[Path, str, str]:
    """A file of ``case`` (the bomb in its second record, or a small one), its format and text unit."""
    name = tmp / ("bomb" if bomb else "small")
    if case in ("jsonl.gz", "jsonl.zst"):
        path = Path(str(name) + "." + case)
        _lines(
            path,
            b'{"text": "first"}\n{"text": "',
            b'"}\n{"text": "third"}\n',
            bomb,
            "gzip" if case.endswith(".gz") else "zstd",
        )
        return path, "jsonl", "line"
    if case == "text-lines":
        path = Path(str(name) + ".txt.gz")
        _lines(path, b"first\n", b"\nthird\n", bomb, "gzip")
        return path, "text", "line"
    if case == "text-file":
        path = Path(str(name) + ".txt.gz")
        _lines(path, b"", b"the end\n", bomb, "gzip")
        return path, "text", "file"
    if case in ("warc", "wet"):
        path = Path(str(name) + (".warc.gz" if case == "warc" else ".warc.wet.gz"))
        _warc(path, "response" if case == "warc" else "conversion", bomb)
        return path, case, "line"
    path = Path(str(name) + ".parquet")
    _parquet(path, bomb)
    return path, "parquet", "line"


@pytest.mark.parametrize("case", ["jsonl.gz", "jsonl.zst", "text-lines", "text-file", "warc", "wet", "parquet"])
def test_a_bomb_is_record_too_large_and_read_in_bounded_memory(tmp_path, case):
    bomb, fmt, unit = _build(tmp_path, case, bomb=True)
    small, _, _ = _build(tmp_path, case, bomb=False)
    assert bomb.stat().st_size < 1024 * 1024
    reasons, peak = _read(bomb, fmt, unit)
    small_reasons, small_peak = _read(small, fmt, unit)
    assert peak - small_peak < MARGIN, f"{case}: {peak >> 20} MiB against {small_peak >> 20} MiB"
    assert small_reasons == ([None] if unit == "file" else [None, None, None])
    assert reasons == (["record_too_large"] if unit == "file" else [None, "record_too_large", None])


def _parquet_read(path: Path, limit: int) -> list:
    from pipeline.config import SourceConfig
    from pipeline.sources.formats import FORMATS
    from pipeline.sources.formats.base import SourceFile
    from pipeline.sources.records import RecordRules

    src = SourceConfig(name="s", paths=[str(path)], format="parquet", keep_fields=["url"])
    file = SourceFile(src, str(path), path.name, path.stat().st_size)
    rules = RecordRules(max_record_bytes=limit, keep_fields=("url",))
    return [rec for s in FORMATS["parquet"].splits(file, 1 << 40) for rec in FORMATS["parquet"].read(s, rules)]


def test_a_parquet_row_group_over_the_limit_in_small_pages_is_read_whole(tmp_path):
    """Its page headers (statistics with string values) are walked, no page is over the limit: every row is read."""
    texts = [f"row {i} " + "word " * 200 for i in range(12000)]
    urls = [f"https://x.test/{i}" for i in range(12000)]
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"text": texts, "url": urls}), path, data_page_size=64 * 1024, compression="zstd")
    assert pq.ParquetFile(path).metadata.num_row_groups == 1
    assert pq.ParquetFile(path).metadata.row_group(0).total_byte_size > 8 * LIMIT  # pages walked: 4 * LIMIT below
    records = _parquet_read(path, 4 * LIMIT)
    assert [p.text for _, p, _ in records] == texts
    assert [json.loads(p.meta)["url"] for _, p, _ in records] == urls


def test_the_rows_sharing_a_row_group_with_a_bomb_page_are_rejects_and_the_next_row_group_is_read(tmp_path):
    path = tmp_path / "shared.parquet"
    with pq.ParquetWriter(path, pa.schema([("text", pa.string()), ("url", pa.string())]), compression="zstd") as w:
        w.write_table(pa.table({"text": ["before", "a" * (8 * LIMIT), "after"], "url": ["u0", "u1", "u2"]}))
        w.write_table(pa.table({"text": ["next group"], "url": ["u3"]}))
    records = _parquet_read(path, LIMIT)
    assert [(pos, p.reason.value if p.reason else p.text) for pos, p, _ in records] == [
        (0, "record_too_large"),
        (1, "record_too_large"),
        (2, "record_too_large"),
        (3, "next group"),
    ]
    assert "inflates to" in records[0][1].detail
