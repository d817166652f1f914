"""The secret filter: which Spark/Hadoop settings hold credentials, and redaction of text and config data.

Used for everything the pipeline writes or prints about a config: ``manifest.json``, stage markers
and error messages. A setting is secret when its key looks like one (``secret``, ``password``,
``token``, ``credential``, ``account.key``, ``sas``, ``keyfile``, ...), unless its key names a class
or a mode (``...credentials.provider``, ``...type``) and its value is only class names or a word.
URLs lose the password of ``scheme://user:password@host`` and signature query parameters.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"
_SECRET_KEY = re.compile(
    r"secret|password|passwd|token|credential|keyfile|access[._-]?key|private[._-]?key|account[._-]?key"
    r"|(^|\.)sas(\.|$)|signature|(^|\.)key$",
    re.IGNORECASE,
)
_CLASS_KEY_ENDINGS = ("provider", "providers", "class", "classes", "impl", "type", "binding", "enabled")
_CLASS_NAMES = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*(\s*,\s*[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*)*")
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'\"]*):(?P<pw>[^/\s@'\"]+)@")
_SIGNED_QUERY = re.compile(
    r"(?P<head>[?&](?:sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature"
    r"|x-goog-credential|access_token|token)=)[^&\s'\"]+",
    re.IGNORECASE,
)


def is_secret_setting(key: str, value: Any) -> bool:
    """True when a Spark/Hadoop setting ``key = value`` looks like a credential."""
    if not _SECRET_KEY.search(str(key)):
        return False
    last = str(key).rsplit(".", 1)[-1].lower()
    return not (last in _CLASS_KEY_ENDINGS and _CLASS_NAMES.fullmatch(str(value).strip()) is not None)


def redact_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with the value of every secret setting replaced by ``<redacted>``."""
    return {k: REDACTED if is_secret_setting(k, v) else redact_text(str(v)) for k, v in settings.items()}


def redact_text(text: str) -> str:
    """``text`` without URL passwords (``scheme://user:<redacted>@host``) or URL signatures."""
    text = _URL_PASSWORD.sub(lambda m: f"{m.group('head')}:{REDACTED}@", text)
    return _SIGNED_QUERY.sub(lambda m: f"{m.group('head')}{REDACTED}", text)


def redact_data(data: Any) -> Any:
    """A copy of nested dicts/lists with every string passed through :func:`redact_text`."""
    if isinstance(data, dict):
        return {k: redact_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(v) for v in data]
    return redact_text(data) if isinstance(data, str) else data
