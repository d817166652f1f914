"""One WARC or WET record into a document or a reject (no Spark): record kinds, HTTP status, content type,
charset and HTML to text (docs/bad_input.md, Web archives)."""

from __future__ import annotations

import codecs
import json
import re
import zlib
from collections.abc import Callable, Iterator

from fastwarc.warc import WarcRecord, WarcRecordType
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import detect_encoding, map_encoding_to_html5

from pipeline.sources.records import Parsed, RecordRules, RejectReason, check_text
from pipeline.sources.trafilatura_text import trafilatura_text
from pipeline.sources.url_rules import blocked_by
from pipeline.sources.warc_framing import header_fault

# resiliparse's option: the page's main content only (navigation, headers and footers left out), the rest of
# extract_plain_text's defaults (alt texts kept, links, form fields and noscript left out)
MAIN_CONTENT = True
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
SKIPPED_KINDS = {  # WARC-Type -> reason; any other type but the one read is warc_other_type
    "request": RejectReason.WARC_REQUEST,
    "metadata": RejectReason.WARC_METADATA,
    "warcinfo": RejectReason.WARC_WARCINFO,
}
# a field line of an HTTP header block: a name (no markup, not starting with a space) and a colon, or a
# continuation line; lenient where servers are (a space inside a name), strict where a body starts (``<html>``)
_HTTP_FIELD = re.compile(rb"^([^\s:<>][^:<>]*:|[ \t])")
CONTENT_DECODERS = {"gzip": (31,), "x-gzip": (31,), "deflate": (15, -15)}  # zlib wbits to try, as warcio does
NOT_DECODED = frozenset({"br", "compress", "x-compress", "zstd"})  # compressed bodies this reader does not inflate
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.IGNORECASE)


def _resiliparse(html: str) -> str:
    return extract_plain_text(html, main_content=MAIN_CONTENT)


EXTRACTORS: dict[str, Callable[[str], str]] = {"resiliparse": _resiliparse, "trafilatura": trafilatura_text}


def meta_charset(body: bytes) -> str | None:
    """The charset a ``<meta charset>`` or ``<meta http-equiv content="...; charset=">`` declares in the first
    4 KB of a page, else None."""
    found = _META_CHARSET.search(body, 0, 4096)
    return found.group(1).decode("ascii") if found else None


def _candidates(body: bytes, declared: list[str | None]) -> Iterator[str]:
    """The charset labels to try in order; the detection (a pass over the body) runs only when none declared
    decodes it."""
    yield from (c for c in declared if c)
    detected = detect_encoding(body)
    if detected:
        yield detected
    yield "utf-8"


def decode_html(body: bytes, declared: list[str | None]) -> tuple[str, str] | None:
    """``(text, charset)``: ``body`` decoded with the first of the declared charsets (HTTP header, then
    ``<meta>``) that is known and decodes it without error, else with the detected one (resiliparse), else
    UTF-8; None when none of them decodes it. Labels are mapped as HTML5 does (``iso-8859-1`` is
    windows-1252)."""
    for label in _candidates(body, declared):
        try:
            codecs.lookup(label)
        except LookupError:
            continue  # an unknown label (resiliparse would map it to UTF-8): try the next one
        codec = map_encoding_to_html5(label) or "utf-8"
        try:
            text = body.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        return (text[1:] if text.startswith("\ufeff") else text), codec
    return None


def target_uri(record: WarcRecord) -> str | None:
    """The record's ``WARC-Target-URI`` without the angle brackets Wget 1.19 wrote around it (as warcio reads it)."""
    uri = record.headers.get("WARC-Target-URI")
    if uri is not None and uri.startswith("<") and uri.endswith(">"):
        return uri[1:-1]
    return uri


def http_header_fault(data: bytes) -> str | None:
    """What is wrong with the HTTP header block of a record (its bytes, decompressed): a line after the status line
    that is neither a ``Name: value`` field nor a continuation, as when the blank line before the body is missing
    and the body follows the fields; None when every line is a field."""
    ends = [i + n for i, n in ((data.find(b"\r\n\r\n"), 4), (data.find(b"\n\n"), 2)) if i != -1]
    payload = data[min(ends) : min(ends) + 65536] if ends else b""
    cuts = [i for i in (payload.find(b"\r\n\r\n"), payload.find(b"\n\n")) if i != -1]
    block = payload[: min(cuts)] if cuts else payload
    for line in block.split(b"\n")[1:]:
        line = line.rstrip(b"\r")
        if line and not _HTTP_FIELD.match(line):
            shown = line[:80].decode("utf-8", "replace")
            return f"HTTP header: a line that is no field (no blank line before the body?): {shown!r}"
    return None


def dechunk(body: bytes) -> bytes:
    """``body`` with HTTP chunked transfer coding removed, as warcio's reader does: a chunk-size line that cannot
    be read (or a chunk not followed by CRLF) means the rest is not chunked and is kept as it is; a last chunk cut
    short is kept."""
    out: list[bytes] = []
    pos = 0
    while True:
        eol = body.find(b"\n", pos, pos + 64)
        line = body[pos : eol + 1] if eol != -1 else body[pos : pos + 64]
        try:
            size = int(line[:-2].split(b";")[0], 16) if line.endswith(b"\r\n") else -1
        except ValueError:
            size = -1
        if not 0 <= size <= 2**31:
            return b"".join(out) + body[pos:]
        pos += len(line)
        if size == 0:
            if body[pos : pos + 2] != b"\r\n":
                return b"".join(out) + line + body[pos + 2 :]
            return b"".join(out)
        data = body[pos : pos + size]
        pos += len(data)
        if len(data) < size:
            return b"".join(out) + data
        if body[pos : pos + 2] != b"\r\n":
            return b"".join(out) + line + data + body[pos + 2 :]
        pos += 2
        out.append(data)


def inflate_body(body: bytes, coding: str, limit: int) -> bytes | None:
    """``body`` decoded from its ``Content-Encoding`` (``gzip`` or ``deflate``) as warcio's reader does: a body
    that fails to inflate before giving any byte is kept as it is (``deflate``: raw deflate tried first), one that
    fails later is cut there. None when it inflates to more than ``limit`` bytes (inflated ``CHUNK`` at a time)."""
    for wbits in CONTENT_DECODERS[coding]:
        d = zlib.decompressobj(wbits)
        out = bytearray()
        tail = body
        try:
            while tail and not d.eof:
                out += d.decompress(tail, 1 << 20)
                tail = d.unconsumed_tail
                if len(out) > limit:
                    return None
        except zlib.error:
            if out:
                return bytes(out)
            continue
        return bytes(out)
    return body


def _decoded_body(record: WarcRecord, body: bytes, limit: int) -> bytes | Parsed:
    """The HTTP body with its transfer and content codings removed (chunked; gzip, deflate)."""
    headers = record.http_headers
    transfer = [c.strip().lower() for c in str(headers.get("Transfer-Encoding") or "").split(",")]
    if transfer[-1] == "chunked":
        body = dechunk(body)
    coding = str(headers.get("Content-Encoding") or "").strip().lower()
    if coding in NOT_DECODED:
        return Parsed(reason=RejectReason.UNDECODABLE_CHARSET, detail=f"Content-Encoding {coding!r} is not decoded")
    if coding in CONTENT_DECODERS:
        inflated = inflate_body(body, coding, limit)
        if inflated is None:
            detail = f"the body inflates ({coding}) to more than {limit} bytes"
            return Parsed(reason=RejectReason.RECORD_TOO_LARGE, detail=detail)
        body = inflated
    return body


def _meta(record: WarcRecord, content_type: str | None, charset: str | None, status: int | None) -> dict:
    headers = record.headers
    return {
        "url": target_uri(record),
        "warc_date": headers.get("WARC-Date"),
        "warc_record_id": record.record_id,
        "content_type": content_type,
        "charset": charset,
        "http_status": status,
    }


def _finish(text: str, meta: dict, rules: RecordRules) -> Parsed:
    bad = check_text(text, rules)
    if bad is not None:
        return bad
    return Parsed(text=text, meta=json.dumps(meta, sort_keys=True, ensure_ascii=False))


def _load(data: bytes) -> WarcRecord | Parsed:
    fault = header_fault(data[:65536])
    if fault is not None:
        return Parsed(reason=RejectReason.MALFORMED_WARC_HEADER, detail=fault[:200])
    try:
        return WarcRecord.from_bytes(data)
    except OSError as exc:  # fastwarc: "Invalid WARC header"
        return Parsed(reason=RejectReason.MALFORMED_WARC_HEADER, detail=str(exc)[:200])


def _skip(record: WarcRecord, keep: WarcRecordType, rules: RecordRules) -> Parsed | None:
    """A reject for a record of another kind than ``keep`` or of a blocklisted domain; None for one to read."""
    if record.record_type != keep:
        kind = str(record.headers.get("WARC-Type", ""))
        return Parsed(reason=SKIPPED_KINDS.get(kind, RejectReason.WARC_OTHER_TYPE), detail=kind[:100])
    domain = blocked_by(target_uri(record), rules.blocked_domains)
    if domain is not None:
        return Parsed(reason=RejectReason.BLOCKED_DOMAIN, detail=domain[:200])
    return None


def parse_warc_record(data: bytes, rules: RecordRules) -> Parsed:
    """A WARC record (its bytes, decompressed): a ``response`` with HTTP status 200 and an HTML content type
    becomes its page's text; every other record is a reject naming why."""
    record = _load(data)
    if isinstance(record, Parsed):
        return record
    skipped = _skip(record, WarcRecordType.response, rules)
    if skipped is not None:
        return skipped
    try:
        record.parse_http()
    except OSError as exc:
        return Parsed(reason=RejectReason.MALFORMED_WARC_HEADER, detail=f"HTTP header: {exc}"[:200])
    if not record.is_http_parsed:
        return Parsed(reason=RejectReason.MALFORMED_WARC_HEADER, detail="no HTTP response in the record")
    fault = http_header_fault(data)
    if fault is not None:
        return Parsed(reason=RejectReason.MALFORMED_WARC_HEADER, detail=fault[:200])
    status = record.http_headers.status_code
    if status != 200:
        return Parsed(reason=RejectReason.HTTP_NOT_200, detail=str(status))
    content_type = record.http_content_type
    if (content_type or "").lower() not in HTML_TYPES:
        return Parsed(reason=RejectReason.NOT_HTML, detail=str(content_type)[:200])
    body = _decoded_body(record, record.reader.read(), rules.max_record_bytes)
    if isinstance(body, Parsed):
        return body
    decoded = decode_html(body, [record.http_charset, meta_charset(body)])
    if decoded is None:
        return Parsed(reason=RejectReason.UNDECODABLE_CHARSET, detail=f"declared {record.http_charset!r}")
    html, charset = decoded
    text = EXTRACTORS[rules.html_extractor](html)
    return _finish(text, _meta(record, content_type, charset, status), rules)


def parse_wet_record(data: bytes, rules: RecordRules) -> Parsed:
    """A WET record: a ``conversion`` record's block is the page's text (UTF-8); other records are rejects
    naming their kind."""
    record = _load(data)
    if isinstance(record, Parsed):
        return record
    skipped = _skip(record, WarcRecordType.conversion, rules)
    if skipped is not None:
        return skipped
    body = record.reader.read()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed(reason=RejectReason.UNDECODABLE_CHARSET, detail=f"not UTF-8: byte {exc.start}: {exc.reason}")
    content_type = record.headers.get("Content-Type")
    return _finish(text, _meta(record, content_type, "utf-8", None), rules)
