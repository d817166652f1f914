"""URL rules of web archive sources on real pages (docs/bad_input.md, URL rules): a URL captured several times
in a run keeps its latest capture (the others are older_capture removals, listed), and a domain blocklist drops
the pages of its domains and their subdomains (blocked_domain rejects); the accounting equation holds."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from resiliparse.extract.html2text import extract_plain_text

from pipeline.config import ConfigError, load_config_text
from pipeline.ingest.stage import STAGE as INGEST
from pipeline.run.accounting import account
from pipeline.run.runner import run_stages
from pipeline.sources.url_rules import blocked_by, parse_blocklist
from pipeline.stage_api.context import RunContext
from tests.warc_corpus import build_captures, html_pages

JAN, MARCH, JUNE_BEFORE = "2024-01-01T00:00:00Z", "2024-03-01T08:30:00.250Z", "2023-06-01T00:00:00Z"
# host of the i-th URL, and whether the blocklist below blocks it (written out here, not computed)
HOSTS = [
    ("docs.python.org", False),
    ("mirror.example.net", True),
    ("a.b.blocked.test", True),
    ("blocked.test", True),
    ("notblocked.test", False),  # ends with "blocked.test" but is no subdomain of it
    ("BLOCKED.test:8080", True),
]
BLOCKLIST = "# spam mirrors\nBLOCKED.test\n*.example.net\n\n"


def _pages(n: int) -> list[str]:
    pages = [html for _, html in html_pages(limit=3 * n)]
    return [html for html in pages if extract_plain_text(html, main_content=True).strip()][:n]


def _url(i: int) -> str:
    return f"https://{HOSTS[i % len(HOSTS)][0]}/page/{i}.html"


def _rows(path) -> list[dict]:
    return pq.read_table(str(path)).to_pylist()


@pytest.mark.spark
def test_latest_capture_kept_older_listed_blocked_domains_rejected(spark, tmp_path):
    html = _pages(60)
    first = [(_url(i), JAN, html[i]) for i in range(36)]
    # the second file: URLs 0-11 captured later (other pages' HTML), 12-23 earlier, 24-25 at the same instant
    second = [(_url(i), MARCH, html[36 + i]) for i in range(12)]
    second += [(_url(i), JUNE_BEFORE, html[36 + i - 12]) for i in range(12, 24)]
    second += [(_url(i), JAN, html[i]) for i in (24, 25)]
    src = tmp_path / "crawl"
    src.mkdir()
    for name, captures in (("a.warc.gz", first), ("b.warc.gz", second)):
        (src / name).write_bytes(build_captures(captures)[0])
    blocklist = tmp_path / "blocklist.txt"
    blocklist.write_text(BLOCKLIST)
    out = tmp_path / "run"
    text = f"""
output: {out}
sources:
  - {{name: web, paths: ["{src}/*.warc.gz"], format: warc}}
  - {{name: plain, paths: ["{tmp_path}/plain.jsonl"], format: jsonl}}
ingest: {{split_bytes: 50000, domain_blocklist: "{blocklist}"}}
tokenizer: {{train: true}}
"""
    (tmp_path / "plain.jsonl").write_text(json.dumps({"text": "same url", "url": _url(0)}) + "\n")
    ctx = RunContext(load_config_text(text, ["spark.master=local[2]"]), spark=spark)
    counts = run_stages(ctx, only="ingest")["ingest"].counts
    blocked = {i for i in range(36) if HOSTS[i % len(HOSTS)][1]}
    captures = len(first) + len(second)
    blocked_captures = sum(HOSTS[i % len(HOSTS)][1] for i in [*range(36), *range(24), 24, 25])
    docs = _rows(out / "documents")
    older = _rows(out / "older_captures")
    web_docs = {d["doc_id"]: d for d in docs if d["source"] == "web"}
    urls = [json.loads(d["meta"])["url"] for d in web_docs.values()]
    assert sorted(urls) == sorted(_url(i) for i in range(36) if i not in blocked)  # one capture per URL
    by_url = {json.loads(d["meta"])["url"]: d for d in web_docs.values()}
    for i in set(range(36)) - blocked:
        page = html[36 + i] if i < 12 else html[i]  # later capture in b, else a's
        assert by_url[_url(i)]["text"] == extract_plain_text(page, main_content=True), i
        assert json.loads(by_url[_url(i)]["meta"])["warc_date"] == (MARCH if i < 12 else JAN)
    expected_older = {_url(i) for i in range(26) if i not in blocked}
    assert sorted(r["url"] for r in older) == sorted(expected_older)
    for row in older:
        assert row["kept_doc_id"] in web_docs and row["doc_id"] not in web_docs
        if row["url"] in (_url(24), _url(25)):  # same instant: the smaller doc_id is kept
            assert row["kept_doc_id"] < row["doc_id"]
    assert [d["text"] for d in docs if d["source"] == "plain"] == ["same url"]  # not a web source
    row = counts["sources"]["web"]
    assert row["older_capture"] == len(expected_older)
    assert row["rejects_by_reason"] == {"blocked_domain": blocked_captures}
    assert row["documents_read"] == captures and row["documents"] == len(web_docs)
    assert "older_capture" not in counts["sources"]["plain"]
    table = account([INGEST], {"ingest": INGEST.result(counts)})  # the accounting equation holds
    assert table["web"]["removed"] == {"older_capture": len(expected_older)}
    rejects = _rows(out / "rejects")
    assert {r["detail"] for r in rejects} == {"example.net", "blocked.test"}
    # older_captures/ is one of ingest's outputs: its files are in the marker resume verifies ...
    marker = json.loads((out / "_stages" / "ingest" / "_SUCCESS").read_text())
    listed = {p for p in marker["outputs"]["files"] if p.startswith("older_captures/")}
    assert listed and listed == {str(p.relative_to(out)) for p in (out / "older_captures").rglob("[!.]*")}
    # ... and a run that keeps every capture leaves no stale list behind
    again = load_config_text(text.replace("split_bytes: 50000", "split_bytes: 50000, latest_capture_only: false"))
    run_stages(RunContext(again, spark=spark), only="ingest", force="ingest")
    assert not (out / "older_captures").exists()
    assert len([d for d in _rows(out / "documents") if d["source"] == "web"]) == captures - blocked_captures


def test_blocklist_lines_and_hosts():
    domains = parse_blocklist(BLOCKLIST + "Bücher.example.\n", "list.txt")
    assert domains == {"blocked.test", "example.net", "xn--bcher-kva.example"}
    for i, (host, is_blocked) in enumerate(HOSTS):
        assert (blocked_by(_url(i), domains) is not None) == is_blocked, host
    assert blocked_by("https://user:pw@Sub.Blocked.Test./x", domains) == "blocked.test"
    assert blocked_by("not a url", domains) is None and blocked_by(None, domains) is None
    with pytest.raises(ConfigError, match=r"ingest\.domain_blocklist.*line 2 of list\.txt"):
        parse_blocklist("ok.test\nhttps://bad.test/path\n", "list.txt")


def test_a_missing_blocklist_file_names_the_key(tmp_path):
    text = f"""
output: {tmp_path}/run
sources: [{{name: web, paths: ["{tmp_path}"], format: warc}}]
ingest: {{domain_blocklist: "{tmp_path}/nope.txt"}}
tokenizer: {{train: true}}
"""
    with pytest.raises(ConfigError, match=r"ingest\.domain_blocklist.*nope\.txt"):
        INGEST.check_config(load_config_text(text))


def test_the_blocklists_domains_are_in_ingests_fingerprint(tmp_path):
    blocklist = tmp_path / "blocklist.txt"
    blocklist.write_text(BLOCKLIST)
    text = f"""
output: {tmp_path}/run
sources: [{{name: web, paths: ["{tmp_path}"], format: warc}}]
ingest: {{domain_blocklist: "{blocklist}"}}
tokenizer: {{train: true}}
"""
    before = INGEST.config_values(load_config_text(text))["ingest"]
    blocklist.write_text("# the same domains, spelled otherwise\n*.example.net\nblocked.test.\n")
    assert INGEST.config_values(load_config_text(text))["ingest"] == before
    blocklist.write_text(BLOCKLIST + "more.test\n")
    assert INGEST.config_values(load_config_text(text))["ingest"] != before


@pytest.mark.spark
def test_bracketed_urls_are_the_same_page_and_empty_urls_are_not(spark, tmp_path):
    """A ``WARC-Target-URI`` in angle brackets (Wget 1.19) is the URL without them, as warcio reads it: it is
    blocked by its domain and is an older capture of the same URL unbracketed; pages with an empty URL are kept."""
    html = _pages(5)
    captures = [
        ("<https://docs.python.org/a.html>", JAN, html[0]),
        ("https://docs.python.org/a.html", MARCH, html[1]),
        ("<https://blocked.test/z>", MARCH, html[2]),
        ("<>", JAN, html[3]),  # an empty URL once its brackets are dropped
        ("<>", MARCH, html[4]),
    ]
    src = tmp_path / "crawl"
    src.mkdir()
    (src / "wget.warc.gz").write_bytes(build_captures(captures)[0])
    (tmp_path / "blocklist.txt").write_text("blocked.test\n")
    out = tmp_path / "run"
    text = f"""
output: {out}
sources: [{{name: web, paths: ["{src}"], format: warc}}]
ingest: {{domain_blocklist: "{tmp_path}/blocklist.txt"}}
tokenizer: {{train: true}}
"""
    counts = run_stages(RunContext(load_config_text(text), spark=spark), only="ingest")["ingest"].counts
    docs = _rows(out / "documents")
    urls = sorted(json.loads(d["meta"])["url"] for d in docs)
    assert urls == ["", "", "https://docs.python.org/a.html"]
    [older] = _rows(out / "older_captures")
    assert (older["url"], older["warc_date"], older["kept_warc_date"]) == ("https://docs.python.org/a.html", JAN, MARCH)
    row = counts["sources"]["web"]
    assert row["rejects_by_reason"] == {"blocked_domain": 1} and row["older_capture"] == 1
    assert row["documents_read"] == 5 and row["documents"] == 3
