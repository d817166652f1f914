"""The warc format with ``html_extractor: trafilatura`` against datatrove (``WarcReader`` + its ``Trafilatura``
extractor, default options) on one WARC of real pages (Debian's Python documentation packed with warcio).

Every page's text equals datatrove's extractor on the HTML the test wrote. Run as a pipeline, datatrove differs
in three pinned ways, each checked for its reason: it keeps the 404 response (its reader reads no HTTP status);
its reader decodes bytes as UTF-8, else as cchardet guesses, ignoring the declared charset, so some re-encoded
pages are dropped or mis-decoded; its extractor remembers text across the documents of a process, so a segment
met in more than two earlier pages is left out of a later one (ours forgets it at each page, so a page's text
does not depend on the task that read it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.config import SourceConfig
from pipeline.sources.formats import FORMATS
from pipeline.sources.formats.base import SourceFile
from pipeline.sources.records import RecordRules
from tests.oracles import require_oracle
from tests.warc_corpus import build_warc, html_pages

STEP = 5  # every 5th page of the documentation (106 pages, 15 re-encoded): trafilatura takes about 0.1 s a page
# measured on these pages with datatrove 0.10.1, trafilatura 2.3, faust-cchardet 3.2 (see the module docstring)
DROPPED_BY_CHARSET = 1  # non-UTF-8 pages cchardet's guess cannot decode: datatrove's reader drops them
MISDECODED = 9  # non-UTF-8 pages cchardet decodes with another charset than the declared one
REMEMBERED = 8  # pages where datatrove's extractor left out segments met in earlier pages


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(what the test wrote, our records by WARC record id, datatrove's reader docs and its extracted docs)."""
    readers = require_oracle("datatrove.pipeline.readers")
    extractors = require_oracle("datatrove.pipeline.extractors")
    require_oracle("cchardet"), require_oracle("magic"), require_oracle("trafilatura")
    built = build_warc(html_pages()[::STEP])
    folder = tmp_path_factory.mktemp("warc")
    path = folder / "pages.warc.gz"
    path.write_bytes(built.data)
    ours = _ours(path, RecordRules(html_extractor="trafilatura"))
    read = list(readers.WarcReader(str(folder)).run())
    html = {d.id: d.text for d in read}
    # a generous timeout: the machine is shared, and a timed-out page would be a difference of the test's making
    extracted = {d.id: d for d in extractors.Trafilatura(timeout=120).run(iter(read))}
    return built, ours, html, extracted


def _ours(path: Path, rules: RecordRules) -> dict[str, tuple[int, dict, str]]:
    src = SourceConfig(name="web", paths=[str(path)], format="warc")
    file = SourceFile(src, str(path), path.name, path.stat().st_size)
    out = {}
    for split in FORMATS["warc"].splits(file, 1 << 40):
        for pos, parsed, _ in FORMATS["warc"].read(split, rules):
            if parsed.reason is None:
                meta = json.loads(parsed.meta)
                out[meta["warc_record_id"]] = (pos, meta, parsed.text)
    return out


def _datatrove_text(html: str) -> str:
    """datatrove's Trafilatura extractor (default options) on one page, with trafilatura's memory cleared."""
    require_oracle("trafilatura.meta").reset_caches()
    return require_oracle("datatrove.pipeline.extractors").Trafilatura().extract(html) or ""


def test_every_page_has_the_text_of_datatroves_extractor(run):
    """Our text of each page equals datatrove's extractor's: as its pipeline gave it when its reader decoded the
    page as written, else (a page it mis-decoded, or a text it shortened by memory) on the page alone."""
    built, ours, html, extracted = run
    by_position = {pos: text for pos, _, text in ours.values()}
    read = {doc.metadata["url"]: (rid, doc.text) for rid, doc in extracted.items()}
    alone = 0
    for page in built.pages:
        text = by_position.get(page.position, "")
        rid_text = read.get(page.url)
        same_html = rid_text is not None and html.get(rid_text[0]) == page.html
        if same_html and rid_text is not None and rid_text[1] == text:
            continue
        alone += 1
        expected = _datatrove_text(page.html)
        assert text == (expected if expected.strip() else ""), page.url
    assert len(by_position) > 90 and alone < len(built.pages) // 3


def test_the_same_records_urls_ids_and_texts_as_datatroves_pipeline(run):
    built, ours, html, extracted = run
    pages = {p.url: p for p in built.pages}
    only_datatrove = {extracted[i].metadata["url"] for i in set(extracted) - set(ours)}
    assert only_datatrove == {"https://docs.python.org/nope"}  # the 404: datatrove reads no HTTP status
    dropped = {ours[i][1]["url"] for i in set(ours) - set(html)}
    assert len(dropped) == DROPPED_BY_CHARSET and all(pages[u].charset != "utf-8" for u in dropped)
    assert set(ours) - set(extracted) == set(ours) - set(html)  # every page datatrove read has text there too
    common = set(ours) & set(extracted)
    for rid in common:
        meta, doc = ours[rid][1], extracted[rid]
        assert (doc.metadata["url"], doc.metadata["date"]) == (meta["url"], meta["warc_date"])
    misdecoded = {rid for rid in common if html[rid] != pages[ours[rid][1]["url"]].html}
    assert len(misdecoded) == MISDECODED
    assert all(pages[ours[rid][1]["url"]].charset != "utf-8" for rid in misdecoded)
    differ = sorted((ours[rid][0], rid) for rid in common - misdecoded if extracted[rid].text != ours[rid][2])
    assert len(differ) == REMEMBERED
    order = sorted((pos, text) for pos, _, text in ours.values())
    for pos, rid in differ:  # each line datatrove lacks was in more than two earlier pages
        lines = extracted[rid].text.splitlines()
        missing = [line for line in ours[rid][2].splitlines() if line not in lines]
        assert missing, rid
        for line in missing:
            assert sum(line in text for p, text in order if p < pos) > 2, line
