"""Turning one raw record into a document or a reject with a reason (docs/bad_input.md, Records)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pipeline.config import IngestConfig, SourceConfig
from pipeline.sources.url_rules import load_blocklist


class RejectReason(str, Enum):
    """Why a raw record did not become a document."""

    MALFORMED_JSON = "malformed_json"
    NOT_AN_OBJECT = "not_an_object"
    MISSING_TEXT_FIELD = "missing_text_field"
    NON_STRING_TEXT = "non_string_text"
    INVALID_UTF8 = "invalid_utf8"
    EMPTY_TEXT = "empty_text"
    TEXT_TOO_LARGE = "text_too_large"
    EMPTY_LINE = "empty_line"
    UNPARSEABLE_RECORD = "unparseable_record"
    UNREADABLE_FILE = "unreadable_file"
    # web archives (docs/bad_input.md, Web archives): records skipped by kind, then damaged or unusable ones
    WARC_REQUEST = "warc_request"
    WARC_METADATA = "warc_metadata"
    WARC_WARCINFO = "warc_warcinfo"
    WARC_OTHER_TYPE = "warc_other_type"
    HTTP_NOT_200 = "http_not_200"
    NOT_HTML = "not_html"
    CORRUPT_RECORD = "corrupt_record"
    MALFORMED_WARC_HEADER = "malformed_warc_header"
    UNDECODABLE_CHARSET = "undecodable_charset"
    RECORD_TOO_LARGE = "record_too_large"
    BLOCKED_DOMAIN = "blocked_domain"  # docs/bad_input.md, URL rules


BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")


@dataclass(frozen=True)
class RecordRules:
    """What a source's records look like and the limits they must meet."""

    text_field: str = "text"
    keep_fields: tuple[str, ...] = ()
    max_text_bytes: int = 10 * 1024 * 1024
    excerpt_chars: int = 200
    text_unit: str = "line"  # text format: one record per line, or per whole file ("file")
    html_extractor: str = "resiliparse"  # warc format: HTML to text
    max_record_bytes: int = 64 * 1024 * 1024  # warc and wet formats: a record's decompressed bytes
    blocked_domains: frozenset[str] = frozenset()  # warc and wet formats: pages of these domains are dropped


def record_rules(
    sources: Sequence[SourceConfig], ingest: IngestConfig, keep_fields: bool = True
) -> dict[str, RecordRules]:
    """The rules of each source by name; ``keep_fields=False`` keeps no field (decontamination's references).
    The domain blocklist file, when set, is read here (once, on the driver)."""
    blocked = load_blocklist(ingest.domain_blocklist)
    return {
        s.name: RecordRules(
            s.text_field,
            tuple(s.keep_fields) if keep_fields else (),
            ingest.max_text_bytes,
            ingest.excerpt_chars,
            s.text_unit,
            ingest.html_extractor,
            ingest.max_record_bytes,
            blocked,
        )
        for s in sources
    }


@dataclass
class Parsed:
    """Outcome of parsing one record: ``text`` and ``meta`` set, or ``reason`` set."""

    text: str | None = None
    meta: str | None = None
    reason: RejectReason | None = None
    detail: str = ""


def excerpt(raw: bytes | str, limit: int) -> str:
    """A bounded, printable excerpt of a raw record for ``rejects/``."""
    if isinstance(raw, bytes):
        raw = raw[: limit * 4].decode("utf-8", errors="replace")
    return raw[:limit].encode("utf-8", errors="replace").decode("utf-8")


def guarded(parse: Callable[..., Parsed], *args: Any) -> Parsed:
    """``parse(*args)``; an unexpected error while parsing is an ``unparseable_record`` reject of that record alone."""
    try:
        return parse(*args)
    except Exception as exc:  # noqa: BLE001 - never let one record take the rest of its split with it
        return Parsed(reason=RejectReason.UNPARSEABLE_RECORD, detail=f"{type(exc).__name__}: {exc}"[:200])


def check_text(text: str, rules: RecordRules) -> Parsed | None:
    """A reject for empty, oversized or non-encodable text; None when the text is fine."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # lone surrogates from \\ud800-style escapes
        return Parsed(reason=RejectReason.INVALID_UTF8, detail=f"unencodable character at {exc.start}")
    if size > rules.max_text_bytes:
        return Parsed(reason=RejectReason.TEXT_TOO_LARGE, detail=f"{size} bytes > {rules.max_text_bytes}")
    if not text.strip():
        return Parsed(reason=RejectReason.EMPTY_TEXT)
    return None


def parse_json_line(line: bytes, rules: RecordRules) -> Parsed:
    """Parse one JSONL line (bytes, newline stripped); a leading BOM is ignored, a blank line is ``empty_line``."""
    if line.startswith(BOM_BYTES):
        line = line[len(BOM_BYTES) :]
    if not line.strip():
        return Parsed(reason=RejectReason.EMPTY_LINE)
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed(reason=RejectReason.INVALID_UTF8, detail=f"byte {exc.start}: {exc.reason}")
    try:
        obj = json.loads(decoded)
    except RecursionError:
        return Parsed(reason=RejectReason.MALFORMED_JSON, detail="nested too deeply to parse")
    except ValueError as exc:  # JSONDecodeError, and Python's int-string limit (a number of > 4300 digits)
        return Parsed(reason=RejectReason.MALFORMED_JSON, detail=str(exc)[:200])
    if not isinstance(obj, dict):
        return Parsed(reason=RejectReason.NOT_AN_OBJECT, detail=type(obj).__name__)
    return parse_mapping(obj, rules)


def parse_mapping(obj: dict, rules: RecordRules) -> Parsed:
    """Validate the text field of an already-decoded record and keep the configured fields."""
    if obj.get(rules.text_field) is None:
        return Parsed(reason=RejectReason.MISSING_TEXT_FIELD, detail=f"no '{rules.text_field}'")
    text = obj[rules.text_field]
    if not isinstance(text, str):
        return Parsed(reason=RejectReason.NON_STRING_TEXT, detail=type(text).__name__)
    bad = check_text(text, rules)
    if bad is not None:
        return bad
    meta = {}
    for key in rules.keep_fields:
        if key in obj:
            value = _finite(obj[key])
            try:
                json.dumps(value, ensure_ascii=False, allow_nan=False, default=str).encode("utf-8")
            except UnicodeEncodeError as exc:
                return Parsed(
                    reason=RejectReason.INVALID_UTF8,
                    detail=f"kept field '{key}': unencodable character (lone surrogate) at {exc.start}",
                )
            except (ValueError, RecursionError) as exc:
                return Parsed(
                    reason=RejectReason.UNPARSEABLE_RECORD,
                    detail=f"kept field '{key}': {type(exc).__name__}: {exc}"[:200],
                )
            meta[key] = value
    return Parsed(text=text, meta=json.dumps(meta, sort_keys=True, ensure_ascii=False, allow_nan=False, default=str))


def _finite(value):
    """``value`` with every NaN or infinite float replaced by None (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def parse_text(raw: bytes, rules: RecordRules, strip_bom: bool = False) -> Parsed:
    """A plain-text record (a line or a whole file); ``strip_bom`` drops a leading U+FEFF (start of a file)."""
    if strip_bom and raw.startswith(BOM_BYTES):
        raw = raw[len(BOM_BYTES) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed(reason=RejectReason.INVALID_UTF8, detail=f"byte {exc.start}: {exc.reason}")
    bad = check_text(text, rules)
    return bad if bad is not None else Parsed(text=text, meta="{}")
