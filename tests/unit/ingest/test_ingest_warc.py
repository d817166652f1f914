"""The warc and wet formats on real pages (Debian's Python documentation packed with warcio): every page's text
equals resiliparse's on the page as the test wrote it, whatever its charset; every other record is a reject
naming its kind; damaged members are rejects and the rest of the file is read; splits change no id."""

from __future__ import annotations

import functools
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from resiliparse.extract.html2text import extract_plain_text

from pipeline.config import ConfigError, SourceConfig, load_config, load_config_text
from pipeline.ingest.stage import STAGE
from pipeline.sources import trafilatura_text
from pipeline.sources.formats import FORMATS
from pipeline.sources.formats.base import SourceFile
from pipeline.sources.records import RecordRules
from tests.warc_corpus import build_warc, build_wet, html_pages

REPO = Path(__file__).resolve().parents[3]
RULES = RecordRules()


@pytest.fixture(scope="module")
def pages():
    return html_pages()


@pytest.fixture(scope="module")
def built(pages):
    return build_warc(pages)


@pytest.fixture(scope="module")
def whole(built, tmp_path_factory):
    """The gzip WARC of every page read whole, once: (its path, its records)."""
    path = tmp_path_factory.mktemp("warc") / "pages.warc.gz"
    path.write_bytes(built.data)
    return path, _read(path, "warc")[1]


def _read(path: Path, fmt: str, split_bytes: int = 1 << 40, rules: RecordRules = RULES):
    src = SourceConfig(name="web", paths=[str(path)], format=fmt)
    file = SourceFile(src, str(path), path.name, path.stat().st_size)
    splits = FORMATS[fmt].splits(file, split_bytes)
    return splits, [rec for s in splits for rec in FORMATS[fmt].read(s, rules)]


def _docs(records):
    return {pos: p for pos, p, _ in records if p.reason is None}


@functools.cache
def _oracle(html: str) -> str:
    return extract_plain_text(html, main_content=True)  # resiliparse directly, on the str the test encoded


def test_every_page_extracts_as_resiliparse_does_and_every_other_record_is_counted(built, whole):
    records = whole[1]
    docs = _docs(records)
    expected = {p.position: p for p in built.pages if _oracle(p.html).strip()}
    assert len(built.pages) > 400 and len(expected) > 400
    assert set(docs) == set(expected)
    for pos, page in expected.items():
        meta = json.loads(docs[pos].meta)
        assert (meta["url"], meta["http_status"], meta["content_type"]) == (page.url, 200, "text/html")
        assert docs[pos].text == _oracle(page.html), page.url
        assert meta["warc_record_id"].startswith("<urn:uuid:") and meta["warc_date"]
    for charset in ("latin-1", "shift_jis", "windows-1251"):
        assert sum(p.charset == charset for p in expected.values()) >= 5
    rejects = {pos: p.reason.value for pos, p, _ in records if p.reason is not None}
    empty = {p.position: "empty_text" for p in built.pages if p.position not in expected}
    assert rejects == {**built.skipped, **empty}
    assert Counter(rejects.values())["warc_request"] == len(built.pages)


def test_splits_at_any_byte_give_the_same_records(whole):
    path, records = whole
    splits, parts = _read(path, "warc", split_bytes=7919)
    assert len(splits) > 100
    assert [(pos, p.reason, p.text) for pos, p, _ in parts] == [(pos, p.reason, p.text) for pos, p, _ in records]


def test_plain_warc_gives_the_texts_of_the_gzip_one(pages, tmp_path):
    plain = build_warc(pages[:60], gzip=False)
    path = tmp_path / "pages.warc"
    path.write_bytes(plain.data)
    _, records = _read(path, "warc")
    docs = _docs(records)
    expected = {p.position: p for p in plain.pages if _oracle(p.html).strip()}
    assert set(docs) == set(expected)
    assert all(docs[pos].text == _oracle(p.html) for pos, p in expected.items())


def test_damaged_members_are_rejects_and_the_rest_is_read(pages, tmp_path):
    b = build_warc(pages[:40])
    data = b.data
    cut = b.pages[5].position  # this response loses its second half
    nxt = min(pos for pos in [*b.skipped, *(p.position for p in b.pages)] if pos > cut)
    garbage = gzip.compress(b"GARBAGE that is no WARC header\r\n\r\nbody")
    damaged = data[: cut + (nxt - cut) // 2] + data[nxt:]
    shift = len(damaged) - len(data)
    at = b.pages[20].position + shift
    damaged = damaged[:at] + garbage + b"\x00junk\x1f\x8b\x08junk" + damaged[at:]
    path = tmp_path / "damaged.warc.gz"
    path.write_bytes(damaged)
    for split_bytes in (1 << 40, 3001):
        _, records = _read(path, "warc", split_bytes)
        reasons = {pos: p.reason.value for pos, p, _ in records if p.reason is not None}
        assert reasons[cut] == "corrupt_record"
        assert reasons[at] == "malformed_warc_header"
        assert at + len(garbage) in reasons and reasons[at + len(garbage)] == "corrupt_record"  # the junk bytes
        kept = {json.loads(p.meta)["url"] for _, p, _ in records if p.reason is None}
        expected = {p.url for p in b.pages if _oracle(p.html).strip()} - {b.pages[5].url}
        assert kept == expected


@pytest.mark.parametrize("compressed", [True, False])
def test_a_header_without_its_blank_line_is_a_malformed_header_and_the_rest_is_read(pages, tmp_path, compressed):
    b = build_warc(pages[:30], gzip=compressed)
    target = b.pages[4].position  # this response's WARC header runs straight into its HTTP status line
    starts = sorted([*b.skipped, *(p.position for p in b.pages)])
    end = starts[starts.index(target) + 1]
    record = gzip.decompress(b.data[target:end]) if compressed else b.data[target:end]
    blank = record.index(b"\r\n\r\n")
    broken = record[:blank] + b"\r\n" + record[blank + 4 :]
    data = b.data[:target] + (gzip.compress(broken) if compressed else broken) + b.data[end:]
    path = tmp_path / ("pages.warc.gz" if compressed else "pages.warc")
    path.write_bytes(data)
    _, records = _read(path, "warc")
    rejects = {pos: (p.reason.value, p.detail) for pos, p, _ in records if p.reason is not None}
    assert rejects[target][0] == "malformed_warc_header" and "HTTP/1.1 200 OK" in rejects[target][1]
    shift = len(data) - len(b.data)  # every later record is read, at its own (shifted) position
    expected = {**b.skipped, **{p.position: "empty_text" for p in b.pages if not _oracle(p.html).strip()}}
    expected = {(pos + shift if pos > target else pos): reason for pos, reason in expected.items()}
    assert {pos: r for pos, (r, _) in rejects.items() if pos != target} == expected
    kept = {json.loads(p.meta)["url"] for _, p, _ in records if p.reason is None}
    assert kept == {p.url for p in b.pages if _oracle(p.html).strip()} - {b.pages[4].url}


def test_records_over_the_limit_and_undecodable_pages_are_rejects(pages, tmp_path):
    b = build_warc(pages[:12])
    path = tmp_path / "pages.warc.gz"
    path.write_bytes(b.data)
    small = RecordRules(max_record_bytes=20_000)
    _, records = _read(path, "warc", rules=small)
    too_large = {pos for pos, p, _ in records if p.reason is not None and p.reason.value == "record_too_large"}
    big = {p.position for p in b.pages if len(p.html.encode(p.charset, "xmlcharrefreplace")) > 20_000}
    assert big and too_large == big


def test_wet_records_keep_their_text(pages, tmp_path):
    texts = [(f"https://docs.python.org/3.11/{rel}", _oracle(html)) for rel, html in pages[:50]]
    texts = [(u, t) for u, t in texts if t.strip()]
    data, positions = build_wet(texts)
    path = tmp_path / "pages.warc.wet.gz"
    path.write_bytes(data)
    _, records = _read(path, "wet", split_bytes=5000)
    docs = _docs(records)
    assert sorted(docs) == positions
    assert [(json.loads(docs[p].meta)["url"], docs[p].text) for p in positions] == texts
    assert [p.reason.value for _, p, _ in records if p.reason is not None] == ["warc_warcinfo"]


def test_commoncrawl_config_loads():
    cfg = load_config(REPO / "conf" / "commoncrawl.yaml")
    assert {s.format for s in cfg.sources} <= {"warc", "wet"}
    assert cfg.ingest.html_extractor == "resiliparse"


def test_trafilatura_chosen_but_not_installed_names_the_key(monkeypatch, tmp_path):
    def missing():
        raise ImportError("No module named 'trafilatura'")

    monkeypatch.setattr(trafilatura_text, "_loaded", [])
    monkeypatch.setattr(trafilatura_text, "_load", missing)
    text = f"""
output: {tmp_path}/run
sources: [{{name: web, paths: ["{tmp_path}"], format: warc}}]
ingest: {{html_extractor: trafilatura}}
tokenizer: {{train: true}}
"""
    with pytest.raises(ConfigError, match=r"^config key 'ingest\.html_extractor': trafilatura is not installed") as err:
        STAGE.check_config(load_config_text(text))
    assert "\n" not in str(err.value)
    STAGE.check_config(load_config_text(text.replace("trafilatura}", "resiliparse}")))
