"""WARC records as other WARC readers frame and decode them, with warcio as the oracle
(docs/bad_input.md, Web archives): a gzip member holding several records gives every record; chunked transfer
coding and gzip / deflate content coding are removed from the body as warcio's ``content_stream()`` removes them;
a ``WARC-Target-URI`` in angle brackets (Wget 1.19) is the URL without them, for the blocklist and in ``meta``;
HTTP headers running into the body are a malformed header."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from pathlib import Path

import pytest
from resiliparse.extract.html2text import extract_plain_text

from pipeline.config import SourceConfig
from pipeline.sources.formats import FORMATS
from pipeline.sources.formats.base import SourceFile
from pipeline.sources.records import RecordRules
from tests.oracles import require_oracle
from tests.warc_corpus import build_warc, html_pages

MEMBER_STRIDE = 1 << 40  # docs/bad_input.md: the k-th record of a member is at its offset + k * 2**40


@pytest.fixture(scope="module")
def pages():
    return html_pages(limit=80)


def _read(path: Path, fmt: str = "warc", split_bytes: int = 1 << 40, rules: RecordRules | None = None):
    src = SourceConfig(name="web", paths=[str(path)], format=fmt)
    file = SourceFile(src, str(path), path.name, path.stat().st_size)
    return [rec for s in FORMATS[fmt].splits(file, split_bytes) for rec in FORMATS[fmt].read(s, rules or RecordRules())]


def _warcio_records(data: bytes) -> list[tuple[str, str | None, bytes]]:
    """(WARC-Type, WARC-Target-URI, decoded body) of every record as warcio's ArchiveIterator reads ``data``."""
    archive = require_oracle("warcio.archiveiterator")
    out = []
    for rec in archive.ArchiveIterator(io.BytesIO(data)):
        out.append((rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"), rec.content_stream().read()))
    return out


def _oracle_text(body: bytes) -> str:
    return extract_plain_text(body.decode("utf-8"), main_content=True)


def _plain_records(data: bytes) -> list[bytes]:
    """The records of an uncompressed WARC written by warcio, each with its trailing CRLF CRLF."""
    archive = require_oracle("warcio.archiveiterator")
    it = archive.ArchiveIterator(io.BytesIO(data))
    bounds = []
    for _ in it:
        it.read_to_end()
        bounds.append((it.get_record_offset(), it.get_record_offset() + it.get_record_length()))
    return [data[a:b] for a, b in bounds]


@pytest.mark.parametrize("split_bytes", [1 << 40, 2003])
def test_a_member_with_several_records_gives_every_record(pages, tmp_path, split_bytes):
    plain = build_warc(pages[:40], gzip=False)
    records = _plain_records(plain.data)
    oracle = _warcio_records(plain.data)
    assert len(records) == len(oracle) > 80
    groups: list[list[bytes]] = []
    i = 0
    while i < len(records):  # members of 1, 2, 3, 4, 1, 2, ... records
        n = 1 + len(groups) % 4
        groups.append(records[i : i + n])
        i += n
    data, starts = b"", []
    for group in groups:
        starts.append(len(data))
        data += gzip.compress(b"".join(group))
    path = tmp_path / "multi.warc.gz"
    path.write_bytes(data)
    ours = _read(path, split_bytes=split_bytes)
    positions = [s + k * MEMBER_STRIDE for s, group in zip(starts, groups, strict=True) for k in range(len(group))]
    assert [pos for pos, _, _ in ours] == positions  # every record, once, at a position of its own
    plain_path = tmp_path / "plain.warc"
    plain_path.write_bytes(plain.data)
    alone = _read(plain_path)
    assert [(p.reason, p.text, p.meta) for _, p, _ in ours] == [(p.reason, p.text, p.meta) for _, p, _ in alone]
    kinds = {"request": "warc_request", "metadata": "warc_metadata", "warcinfo": "warc_warcinfo"}
    for (_, parsed, _), (kind, url, _) in zip(ours, oracle, strict=True):
        if kind in kinds:
            assert parsed.reason is not None and parsed.reason.value == kinds[kind]
        elif parsed.reason is None:
            assert json.loads(parsed.meta)["url"] == url
    assert sum(p.reason is None for _, p, _ in ours) > 30


def test_a_damaged_record_inside_a_member_is_a_reject_and_the_next_member_is_read(pages, tmp_path):
    records = _plain_records(build_warc(pages[:3], gzip=False).data)
    cut = records[2][: len(records[2]) // 2]  # the member ends inside its third record
    data = gzip.compress(records[0] + records[1] + cut)
    data += gzip.compress(records[3])
    path = tmp_path / "cut.warc.gz"
    path.write_bytes(data)
    ours = _read(path)
    reasons = [(pos, p.reason.value if p.reason else None) for pos, p, _ in ours]
    first = len(data) - len(gzip.compress(records[3]))
    assert reasons[:3] == [(0, "warc_warcinfo"), (MEMBER_STRIDE, "warc_request"), (2 * MEMBER_STRIDE, "corrupt_record")]
    assert reasons[3][0] == first


def _response(writer, headers_mod, url: str, body: bytes, fields: list[tuple[str, str]]):
    fields = [("Content-Type", "text/html; charset=utf-8"), *fields]
    http = headers_mod.StatusAndHeaders("200 OK", fields, protocol="HTTP/1.1")
    return writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http)


def _chunked(body: bytes, size: int, ext: str = "") -> bytes:
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    parts = [b"%x%s\r\n%s\r\n" % (len(piece), ext.encode(), piece) for piece in pieces]
    return b"".join(parts) + b"0\r\n\r\n"


def _raw_deflate(body: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(body) + c.flush()


def test_chunked_and_compressed_bodies_decode_as_warcio_decodes_them(pages, tmp_path):
    warcwriter = require_oracle("warcio.warcwriter")
    headers_mod = require_oracle("warcio.statusandheaders")
    htmls = [html.encode("utf-8") for _, html in pages if _oracle_text(html.encode("utf-8")).strip()][:12]
    variants = [
        ("chunked", lambda b: _chunked(b, 100), [("Transfer-Encoding", "chunked")]),
        ("chunked-ext", lambda b: _chunked(b, 4096, ";name=v"), [("Transfer-Encoding", "chunked")]),
        ("gzip", gzip.compress, [("Content-Encoding", "gzip")]),
        ("deflate", zlib.compress, [("Content-Encoding", "deflate")]),
        ("raw-deflate", _raw_deflate, [("Content-Encoding", "deflate")]),
        (
            "chunked+gzip",
            lambda b: _chunked(gzip.compress(b), 1000),
            [("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")],
        ),
        ("declared-chunked-but-plain", lambda b: b, [("Transfer-Encoding", "chunked")]),
        ("declared-gzip-but-plain", lambda b: b, [("Content-Encoding", "gzip")]),
        ("chunked-cut-short", lambda b: _chunked(b, 5000)[:-700], [("Transfer-Encoding", "chunked")]),
    ]
    buf = io.BytesIO()
    writer = warcwriter.WARCWriter(buf, gzip=True)
    for i, html in enumerate(htmls):
        for name, encode, fields in variants:
            writer.write_record(_response(writer, headers_mod, f"https://x.test/{name}/{i}", encode(html), fields))
    path = tmp_path / "coded.warc.gz"
    path.write_bytes(buf.getvalue())
    oracle = {url: body for _, url, body in _warcio_records(buf.getvalue())}
    ours = _read(path)
    assert len(ours) == len(oracle) == len(htmls) * len(variants)
    for _, parsed, _ in ours:
        assert parsed.reason is None, parsed
        url = json.loads(parsed.meta)["url"]
        assert parsed.text == _oracle_text(oracle[url]), url
    # the decoded bodies really differ from the raw ones (the test would catch a reader that did not decode)
    assert "64\n" not in next(p.text for _, p, _ in ours if "/chunked/" in p.meta)


def test_a_body_inflating_over_the_record_limit_is_record_too_large(tmp_path):
    warcwriter = require_oracle("warcio.warcwriter")
    headers_mod = require_oracle("warcio.statusandheaders")
    buf = io.BytesIO()
    writer = warcwriter.WARCWriter(buf, gzip=True)
    bomb = gzip.compress(b"<p>" + b"a" * 5_000_000 + b"</p>")
    writer.write_record(_response(writer, headers_mod, "https://x.test/bomb", bomb, [("Content-Encoding", "gzip")]))
    writer.write_record(_response(writer, headers_mod, "https://x.test/br", b"\x1b\x00", [("Content-Encoding", "br")]))
    page = b"<html><body><p>A page after the bomb.</p></body></html>"
    writer.write_record(_response(writer, headers_mod, "https://x.test/ok", page, []))
    path = tmp_path / "bomb.warc.gz"
    path.write_bytes(buf.getvalue())
    ours = _read(path, rules=RecordRules(max_record_bytes=1_000_000))
    reasons = [p.reason.value if p.reason else None for _, p, _ in ours]
    assert reasons == ["record_too_large", "undecodable_charset", None]
    assert "inflates" in ours[0][1].detail and "'br'" in ours[1][1].detail


def test_a_bracketed_target_uri_is_blocked_and_kept_without_brackets(tmp_path):
    warcwriter = require_oracle("warcio.warcwriter")
    headers_mod = require_oracle("warcio.statusandheaders")
    buf = io.BytesIO()
    writer = warcwriter.WARCWriter(buf, gzip=True)
    page = b"<html><body><p>Some text of a page.</p></body></html>"
    for uri in ("<http://blocked.test/z>", "<http://fine.test/a>", "http://fine.test/b"):
        writer.write_record(_response(writer, headers_mod, uri, page, []))
    path = tmp_path / "wget.warc.gz"
    path.write_bytes(buf.getvalue())
    assert b"WARC-Target-URI: <http://blocked.test/z>" in gzip.decompress(buf.getvalue())
    oracle_urls = [url for _, url, _ in _warcio_records(buf.getvalue())]
    ours = _read(path, rules=RecordRules(blocked_domains=frozenset({"blocked.test"})))
    assert ours[0][1].reason is not None and ours[0][1].reason.value == "blocked_domain"
    assert (
        [json.loads(p.meta)["url"] for _, p, _ in ours[1:]]
        == oracle_urls[1:]
        == ["http://fine.test/a", "http://fine.test/b"]
    )


@pytest.mark.parametrize("compressed", [True, False])
def test_http_headers_running_into_the_body_are_a_malformed_header(tmp_path, compressed):
    payload = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n<html><body><p>Hello: world</p></body></html>"
    head = (
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://x.test/\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n"
        b"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\n"
        b"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n" % len(payload)
    )
    record = head + payload + b"\r\n\r\n"
    path = tmp_path / ("run.warc.gz" if compressed else "run.warc")
    path.write_bytes(gzip.compress(record) if compressed else record)
    [(_, parsed, _)] = _read(path)
    assert parsed.reason is not None and parsed.reason.value == "malformed_warc_header", parsed
    assert "<html>" in parsed.detail
