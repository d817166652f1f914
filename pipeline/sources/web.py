"""One WARC or WET record into a document or a reject (no Spark): record kinds, HTTP status, content type,
charset and HTML to text (docs/bad_input.md, Web archives)."""

from __future__ import annotations

import codecs
import json
import re
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


def _meta(record: WarcRecord, content_type: str | None, charset: str | None, status: int | None) -> dict:
    headers = record.headers
    return {
        "url": headers.get("WARC-Target-URI"),
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
    domain = blocked_by(record.headers.get("WARC-Target-URI"), rules.blocked_domains)
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
    status = record.http_headers.status_code
    if status != 200:
        return Parsed(reason=RejectReason.HTTP_NOT_200, detail=str(status))
    content_type = record.http_content_type
    if (content_type or "").lower() not in HTML_TYPES:
        return Parsed(reason=RejectReason.NOT_HTML, detail=str(content_type)[:200])
    body = record.reader.read()
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
