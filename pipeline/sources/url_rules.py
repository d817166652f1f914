"""The domain blocklist of web archive sources (``ingest.domain_blocklist``; docs/bad_input.md, URL rules): a
file with one domain per line, a page whose host is that domain or one of its subdomains is dropped."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pipeline.config.errors import ConfigError
from pipeline.storage import resolve

KEY = "ingest.domain_blocklist"
_DOMAIN = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


def parse_blocklist(text: str, where: str) -> frozenset[str]:
    """The domains of a blocklist file's text: one per line, lowercased; blank lines and ``#`` comments are
    ignored, a leading ``*.`` or ``.`` and a trailing ``.`` are dropped. A line that is no domain raises
    :class:`ConfigError` naming the key, ``where`` and the line number."""
    domains = set()
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0].strip().lower()
        if not entry:
            continue
        name = entry.removeprefix("*.").removeprefix(".").removesuffix(".")
        try:
            name = name.encode("idna").decode("ascii")  # an internationalised domain as hosts spell it
        except UnicodeError:
            pass
        if not _DOMAIN.match(name):
            raise ConfigError(KEY, f"line {number} of {where} is not a domain: {line.strip()[:80]!r}")
        domains.add(name)
    return frozenset(domains)


def load_blocklist(path: str | None) -> frozenset[str]:
    """The domains of the blocklist file at ``path`` (local or object store); empty when ``path`` is None."""
    if path is None:
        return frozenset()
    fs, where = resolve(path)
    try:
        with fs.open(where, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError(KEY, f"cannot read {path}: {exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(KEY, f"{path} is not UTF-8 text (byte {exc.start})") from exc
    return parse_blocklist(text, path)


def host(url: str | None) -> str | None:
    """The URL's host, lowercased, without port, user or trailing dot; None when it has none."""
    if not url:
        return None
    try:
        name = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return name.rstrip(".") if name else None


def blocked_by(url: str | None, domains: frozenset[str]) -> str | None:
    """The blocklisted domain that ``url``'s host is or lies under, else None."""
    if not domains:
        return None
    name = host(url)
    if not name:
        return None
    labels = name.split(".")
    for i in range(len(labels)):
        suffix = ".".join(labels[i:])
        if suffix in domains:
            return suffix
    return None
