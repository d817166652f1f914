"""report.json's and report.html's filter section (issue #29, item 5) on a run directory whose filter outputs
the test wrote itself (tests/filter_run.py): every figure is checked against what the test wrote or counted."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipeline.filter.report_section import FilterSummaryError
from pipeline.filter.stage import STAGE as FILTER
from pipeline.report.data import build_report_data
from pipeline.report.html import render_html
from tests.filter_run import HOSTILE, MEASURES, NO_MEASURE, SOURCES, FilterFacts, build_filter_run

SCHEMA = Path(__file__).resolve().parents[3] / "pipeline" / "report" / "schema.json"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def facts(tmp_path: Path, shared_fixtures: Path) -> FilterFacts:
    return build_filter_run(tmp_path / "run", shared_fixtures)


def _validate(data: dict) -> None:
    import jsonschema

    jsonschema.validate(data, json.loads(SCHEMA.read_text()), cls=jsonschema.Draft202012Validator)


def test_report_json_carries_the_filter_counts_the_stage_wrote(facts):
    data = build_report_data(str(facts.run), (FILTER,))
    _validate(data)
    section = data["filter"]
    for source in SOURCES:
        row, dropped = section["sources"][source], facts.dropped(source)
        assert (row["read"], row["kept"]) == (facts.read[source], facts.read[source] - len(
            [r for r in facts.drops if r["source"] == source]))  # fmt: skip
        assert row["dropped"] == dropped and row["dropped_total"] == sum(dropped.values())
        assert row["changed"] == facts.changed[source]
        assert row["languages"] == facts.languages[source]
        assert list(row["languages"]) == sorted(facts.languages[source], key=lambda k: -facts.languages[source][k])
        assert data["sources"][source]["filtered"] == dropped  # the accounting's filter removals, by rule
        assert data["sources"][source]["duplicates_removed"] == 3 and "duplicates_removed" not in dropped
    total = {r: sum(facts.dropped(s).get(r, 0) for s in SOURCES) for r in {d["reason"] for d in facts.drops}}
    assert data["summary"]["filtered"] == total
    assert set(section["rules"]) == {*MEASURES, NO_MEASURE}


def test_histograms_are_spelled_out_with_under_and_overflow(facts):
    measures = build_report_data(str(facts.run), (FILTER,))["filter"]["measures"]
    assert set(measures) == set(MEASURES)
    for rule, (threshold, direction, edges, _) in MEASURES.items():
        got = measures[rule]
        assert (got["threshold"], got["direction"], got["edges"]) == (threshold, direction, edges)
        for source in SOURCES:
            counts, under, over = facts.histogram(rule, source)
            assert got["counts"][source] == {"counts": counts, "underflow": under, "overflow": over}
            assert sum(counts) + under + over == len(facts.values[rule][source]) > 0


def test_examples_are_the_first_dropped_documents_per_rule_and_source(facts):
    examples = build_report_data(str(facts.run), (FILTER,), per_source=3)["filter"]["examples"]
    for source in SOURCES:
        for rule in facts.dropped(source):
            rows = [r for r in facts.drops if r["source"] == source and r["reason"] == rule][:3]
            got = examples[rule][source]
            assert [e["doc_id"] for e in got] == [r["doc_id"] for r in rows]
            assert [(e["value"], e["threshold"], e["excerpt"]) for e in got] == [
                (r["value"], r["threshold"], r["excerpt"]) for r in rows
            ]
    assert all(source in SOURCES for by_source in examples.values() for source in by_source)


def _histograms(page: str) -> dict[str, ET.Element]:
    section = re.search(r'<section class="filter">(.*?)</section>', page, re.S).group(1)
    charts = [ET.fromstring(s) for s in re.findall(r"<svg .*?</svg>", section, re.S)]
    return {c.find(f"{SVG}title").text: c for c in charts if c.find(f".//{SVG}line[@class='threshold']") is not None}


def test_each_histogram_marks_its_threshold_between_the_right_bins(facts):
    page = render_html(build_report_data(str(facts.run), (FILTER,)), (FILTER,))
    charts = _histograms(page)
    assert set(charts) == set(MEASURES)
    for rule, (threshold, direction, _, _) in MEASURES.items():
        line = charts[rule].find(f".//{SVG}line[@class='threshold']")
        x = float(line.get("x1"))
        bars = 0
        for rect in charts[rule].iter(f"{SVG}rect"):
            title = rect.find(f"{SVG}title")
            found = re.search(r"in \[([-\d.e+]+), ([-\d.e+]+)\)", title.text) if title is not None else None
            if not found:
                continue
            lo, left = float(found.group(1)), float(rect.get("x"))
            right = left + float(rect.get("width"))
            assert right <= x + 0.6 if lo < threshold else left >= x - 0.6, (rule, lo, left, right, x)
            bars += 1
        assert bars == sum(1 for s in SOURCES for c in facts.histogram(rule, s)[0] if c)
        failing = charts[rule].find(f".//{SVG}rect[@class='failing']")
        shaded = (float(failing.get("x")), float(failing.get("x")) + float(failing.get("width")))
        assert shaded[1 if direction == "min" else 0] == pytest.approx(x, abs=0.1)  # the failing side is shaded


def test_page_shows_drops_languages_and_escaped_examples(facts):
    page = render_html(build_report_data(str(facts.run), (FILTER,)), (FILTER,))
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;alert(" in page
    section = re.search(r'<section class="filter">(.*?)</section>', page, re.S).group(1)
    for source in SOURCES:
        for rule, n in facts.dropped(source).items():
            row = re.search(rf"<tr><td>{re.escape(rule)}</td>(.*?)</tr>", section).group(1)
            cells = [int(c.replace(",", "")) for c in re.findall(r'<td class="n">([\d,]+)</td>', row)]
            assert cells[SOURCES.index(source)] == n
            assert cells[-1] == sum(facts.dropped(s).get(rule, 0) for s in SOURCES)
    german = re.search(r"<tr><td>de</td>(.*?)</tr>", section).group(1)
    assert re.findall(r">(\d+)<", german) == ["4", "0"]
    shown = [r for r in facts.drops if r["excerpt"] == HOSTILE][0]
    assert f"doc_id {shown['doc_id']} · web · value <b>{shown['value']:g}</b>" in section
    header = re.search(r"<tr>(<th>source</th>.*?)</tr>", page).group(1)
    assert "filtered" in header and "gopher" not in header  # one overview column for every filter rule
    kpis = dict(re.findall(r"<div>([a-z ]+)<b>([\d,]+)</b></div>", page))
    assert kpis["filtered"] == str(len(facts.drops))


def test_a_run_without_the_filter_stage_has_no_filter_figures(facts):
    (facts.run / "filter" / "summary.json").unlink()
    manifest = json.loads((facts.run / "manifest.json").read_text())
    del manifest["stages"]["filter"]  # the run's manifest records no filter stage
    (facts.run / "manifest.json").write_text(json.dumps(manifest))
    data = build_report_data(str(facts.run), (FILTER,))
    assert "filter" not in data and "filtered" not in data["summary"]
    assert all("filtered" not in row for row in data["sources"].values())
    assert '<section class="filter">' not in render_html(data, (FILTER,))


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda s: s["measures"]["fineweb.line_punct_ratio"]["counts"]["web"].pop(), "counts.web"),
        (lambda s: s["measures"]["fineweb.line_punct_ratio"].update(direction="up"), "line_punct_ratio.direction"),
        (lambda s: s["sources"]["code"].pop("read"), "sources.code.read"),
        (lambda s: s["sources"]["web"]["languages"].update(en=2.5), "sources.web.languages"),
        (lambda s: s["measures"]["fineweb.line_punct_ratio"]["bins"].reverse(), "line_punct_ratio.bins"),
    ],
)
def test_a_malformed_summary_is_refused_naming_the_key(facts, change, key):
    path = facts.run / "filter" / "summary.json"
    summary = json.loads(path.read_text())
    change(summary)
    path.write_text(json.dumps(summary))
    with pytest.raises(FilterSummaryError, match=re.escape(key)) as error:
        build_report_data(str(facts.run), (FILTER,))
    assert "\n" not in str(error.value) and "filter/summary.json" in str(error.value)


def test_the_filter_stage_draws_its_own_entries_once(facts):
    """report/ draws no filter section itself: the stage does (Stage.report_html), and the entries it names in
    ``report_keys`` are not shown again as tables of figures; without the stage the entry is such a table."""
    data = build_report_data(str(facts.run), (FILTER,))
    page = render_html(data, (FILTER,))
    assert '<section class="filter"><h2>Filter</h2>' in page and page.count("<h2>Filter</h2>") == 1
    bare = render_html(data)
    assert '<section class="filter">' not in bare and bare.count("<h2>Filter</h2>") == 1
