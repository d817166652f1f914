"""Real HTML pages (Debian's Python documentation) packed into WARC and WET files with warcio for the web
archive tests. Without the Debian package the tests skip locally and fail in CI (``.ci/run`` installs it)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.oracles import missing_tool, require_oracle

DOC_ROOTS = [Path("/usr/share/doc/python3.11/html"), Path("/usr/share/doc/python3/html")]
DEBIAN_PACKAGE = "python3.11-doc"
# a sentence in each charset's own script, added to the re-encoded pages so the charset matters
CHARSETS = {
    "latin-1": "Déjà vu: façade, naïve, coöperate, señor.",
    "shift_jis": "日本語の文章です。カタカナとひらがな。",
    "windows-1251": "Съешь же ещё этих мягких французских булок.",
}


def html_pages(limit: int | None = None) -> list[tuple[str, str]]:
    """(relative path, HTML text) of the documentation's pages, sorted by path."""
    root = next((r for r in DOC_ROOTS if r.is_dir()), None)
    if root is None:
        missing_tool(f"no HTML pages at {DOC_ROOTS[0]}: apt-get install {DEBIAN_PACKAGE}")
        raise AssertionError("unreachable")
    paths = sorted(p for p in root.rglob("*.html") if p.is_file())
    if len(paths) < 50:
        missing_tool(f"only {len(paths)} pages under {root}: apt-get install {DEBIAN_PACKAGE}")
    return [(str(p.relative_to(root)), p.read_text("utf-8")) for p in paths[:limit]]


@dataclass
class Page:
    """One response the test wrote: where, what it should extract to (from the HTML string), how it was sent."""

    url: str
    html: str  # the page as a str, before encoding (what the oracle extracts from)
    charset: str
    position: int = -1


@dataclass
class Built:
    """A WARC file's bytes and what the test put in it."""

    data: bytes
    pages: list[Page] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)  # position -> expected reject reason


def _recharset(html: str, charset: str, declare: str) -> str:
    """``html`` declaring ``charset`` in its ``<meta>`` (or declaring nothing), with a sentence in that script."""
    html = re.sub(r"<meta charset=\"?utf-8\"?\s*/?>", "", html, flags=re.IGNORECASE)
    if declare == "meta":
        html = html.replace("<head>", f'<head><meta charset="{charset}">', 1)
    sentence = CHARSETS.get(charset)
    if sentence:
        html = re.sub(r"(<div class=\"body\" role=\"main\">)", rf"\1<p>{sentence}</p>", html, count=1)
    return html


def build_warc(pages: list[tuple[str, str]], gzip: bool = True) -> Built:
    """A WARC of the pages: a request and a response per page, a metadata record every 10th page, every 7th page
    re-encoded (charset in the HTTP header, in ``<meta>`` only, ...), plus a 404 and an image response."""
    warcio = require_oracle("warcio.warcwriter")
    headers_mod = require_oracle("warcio.statusandheaders")
    buf = io.BytesIO()
    writer = warcio.WARCWriter(buf, gzip=gzip)
    built = Built(b"")

    def write(rec, expect: str | None = None) -> int:
        pos = buf.tell()
        writer.write_record(rec)
        if expect:
            built.skipped[pos] = expect
        return pos

    names = list(CHARSETS)
    write(writer.create_warcinfo_record("test.warc", {"software": "tests/warc_corpus.py"}), "warc_warcinfo")
    for i, (rel, html) in enumerate(pages):
        url = f"https://docs.python.org/3.11/{rel}"
        charset, declare = "utf-8", "header"
        if i % 7 == 3:
            charset, declare = names[(i // 7) % 3], ("header", "meta")[(i // 21) % 2]
        elif i % 7 == 5:
            declare = "none"  # UTF-8, declared nowhere: detected
        html = _recharset(html, charset, declare) if (charset != "utf-8" or declare != "header") else html
        body = html.encode(charset, errors="xmlcharrefreplace")
        content_type = f"text/html; charset={charset}" if declare == "header" else "text/html"
        http = headers_mod.StatusAndHeaders("200 OK", [("Content-Type", content_type)], protocol="HTTP/1.1")
        request = headers_mod.StatusAndHeaders(
            "GET /" + rel + " HTTP/1.1", [("Host", "docs.python.org")], is_http_request=True
        )
        write(writer.create_warc_record(url, "request", payload=io.BytesIO(b""), http_headers=request), "warc_request")
        page = Page(url, html, charset)
        page.position = write(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
        built.pages.append(page)
        if i % 10 == 0:
            meta = writer.create_warc_record(url, "metadata", payload=io.BytesIO(b"fetchTimeMs: 12\r\n"))
            write(meta, "warc_metadata")
    missing = headers_mod.StatusAndHeaders("404 Not Found", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    body = b"<html><body><p>Not found</p></body></html>"
    rec = writer.create_warc_record(
        "https://docs.python.org/nope", "response", payload=io.BytesIO(body), http_headers=missing
    )
    write(rec, "http_not_200")
    png = headers_mod.StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
    rec = writer.create_warc_record(
        "https://docs.python.org/a.png", "response", payload=io.BytesIO(b"\x89PNG...."), http_headers=png
    )
    write(rec, "not_html")
    built.data = buf.getvalue()
    return built


def build_wet(texts: list[tuple[str, str]]) -> tuple[bytes, list[int]]:
    """A WET file (gzip per record) of (url, text) conversion records after a warcinfo record; their positions."""
    warcio = require_oracle("warcio.warcwriter")
    buf = io.BytesIO()
    writer = warcio.WARCWriter(buf, gzip=True)
    writer.write_record(writer.create_warcinfo_record("test.warc.wet.gz", {"software": "tests"}))
    positions = []
    for url, text in texts:
        positions.append(buf.tell())
        rec = writer.create_warc_record(
            url, "conversion", payload=io.BytesIO(text.encode("utf-8")), warc_content_type="text/plain"
        )
        writer.write_record(rec)
    return buf.getvalue(), positions


def build_captures(captures: list[tuple[str, str, str]]) -> tuple[bytes, list[int]]:
    """A WARC (gzip per record) of UTF-8 HTML responses, one per (url, WARC-Date, html); their positions."""
    warcio = require_oracle("warcio.warcwriter")
    headers_mod = require_oracle("warcio.statusandheaders")
    buf = io.BytesIO()
    writer = warcio.WARCWriter(buf, gzip=True)
    positions = []
    for url, date, html in captures:
        http = headers_mod.StatusAndHeaders(
            "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
        )
        rec = writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(html.encode("utf-8")),
            http_headers=http,
            warc_headers_dict={"WARC-Date": date},
        )
        positions.append(buf.tell())
        writer.write_record(rec)
    return buf.getvalue(), positions
