"""Turning one raw record into a document or a reject with a reason (SPEC §9)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum


class RejectReason(str, Enum):
    """Why a raw record did not become a document."""

    MALFORMED_JSON = "malformed_json"
    NOT_AN_OBJECT = "not_an_object"
    MISSING_TEXT_FIELD = "missing_text_field"
    NON_STRING_TEXT = "non_string_text"
    INVALID_UTF8 = "invalid_utf8"
    EMPTY_TEXT = "empty_text"
    TEXT_TOO_LARGE = "text_too_large"
    UNREADABLE_FILE = "unreadable_file"


@dataclass(frozen=True)
class RecordRules:
    """What a source's records look like and the limits they must meet."""

    text_field: str = "text"
    keep_fields: tuple[str, ...] = ()
    max_text_bytes: int = 10 * 1024 * 1024
    excerpt_chars: int = 200


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
    """Parse one JSONL line (bytes, newline stripped)."""
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed(reason=RejectReason.INVALID_UTF8, detail=f"byte {exc.start}: {exc.reason}")
    try:
        obj = json.loads(decoded)
    except (json.JSONDecodeError, RecursionError) as exc:
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
    meta = {k: obj[k] for k in rules.keep_fields if k in obj}
    return Parsed(text=text, meta=json.dumps(meta, sort_keys=True, ensure_ascii=False, default=str))


def parse_text(raw: bytes, rules: RecordRules) -> Parsed:
    """A plain-text record (a line or a whole file)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed(reason=RejectReason.INVALID_UTF8, detail=f"byte {exc.start}: {exc.reason}")
    bad = check_text(text, rules)
    return bad if bad is not None else Parsed(text=text, meta="{}")
