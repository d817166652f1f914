"""report.html's filter section in a real headless Chromium (tests/e2e/test_report_browser.py's harness): no console
errors, every chart of the section drawn with marks, one histogram per measured rule with its threshold line
visible inside the chart, and at 1280 and 800 px nothing off the page; on filter outputs the test writes beside a
manifest of its own, and beside the sample run (tests/cluster_runs.py, local_reference_run).

Without Chromium the test skips, except in CI (``PIPELINE_REQUIRE_ORACLES=1``), where it fails.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.filter.stage import STAGE as FILTER
from pipeline.report.data import build_report_data
from pipeline.report.publish import write_reports
from tests.browser_cdp import Chromium
from tests.e2e.test_report_browser import _chromium, _errors
from tests.filter_run import MEASURES, FilterFacts, build_filter_run

WIDTHS = (1280, 800)

SECTION_FACTS = """(() => {
  const section = document.querySelector('section.filter');
  if (!section) return null;
  const charts = Array.from(section.querySelectorAll('svg')).map(svg => {
    const r = svg.getBoundingClientRect();
    const line = svg.querySelector('line.threshold');
    const bars = Array.from(svg.querySelectorAll('rect')).filter(e => e.querySelector('title'));
    const l = line ? line.getBoundingClientRect() : null;
    return {title: svg.querySelector('title').textContent, w: r.width, h: r.height,
            bars: bars.filter(b => b.getBoundingClientRect().height > 0).length,
            threshold: l ? {h: l.height, inside: l.left >= r.left && l.right <= r.right} : null};
  });
  const width = window.innerWidth;
  const outside = Array.from(document.querySelectorAll('body *'))
    .filter(e => e.getBoundingClientRect().right > width + 1 && !e.closest('.scroll, svg'))
    .map(e => e.tagName + ' ' + (e.textContent || '').slice(0, 40));
  const hiddenScroll = Array.from(section.querySelectorAll('.scroll'))
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => (e.textContent || '').slice(0, 40));
  return {charts, outside, hiddenScroll, width, scrollWidth: document.documentElement.scrollWidth,
          excerpts: section.querySelectorAll('pre.excerpt').length};
})()"""


def _check_page(html_path: str, facts: FilterFacts) -> None:
    examples = sum(min(3, n) for s in facts.sources for n in facts.dropped(s).values())
    _check_section(html_path, set(MEASURES), len(MEASURES) + 1, examples)


def _check_section(html_path: str, with_threshold: set[str], charts_total: int, examples: int) -> None:
    browser = Chromium(_chromium())
    try:
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            browser.call(domain)
        browser.call("Page.navigate", {"url": Path(html_path).resolve().as_uri()})
        browser.wait_for("Page.loadEventFired")
        for width in WIDTHS:
            browser.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            )
            seen = browser.evaluate(SECTION_FACTS)
            assert seen is not None, "no filter section on the page"
            charts = seen["charts"]
            assert all(c["w"] > 50 and c["h"] > 50 and c["bars"] > 0 for c in charts), charts
            histograms = {c["title"]: c["threshold"] for c in charts if c["threshold"] is not None}
            assert set(histograms) == with_threshold, charts
            assert all(t["h"] > 50 and t["inside"] for t in histograms.values()), histograms
            assert len(charts) == charts_total  # one per measured rule and the drops per filter
            assert seen["scrollWidth"] <= seen["width"] == width, seen
            assert seen["outside"] == [] and seen["hiddenScroll"] == [], seen
            assert seen["excerpts"] == examples
        assert _errors(browser.events) == []
    finally:
        browser.close()


def test_filter_section_renders_in_chromium_at_two_widths(tmp_path: Path, shared_fixtures: Path) -> None:
    facts = build_filter_run(tmp_path / "run", shared_fixtures)
    _check_page(write_reports(str(facts.run), (FILTER,))[1], facts)


@pytest.mark.spark
def test_filter_section_of_the_sample_run(local_reference_run: Path, tmp_path: Path) -> None:
    """The sample run filters (conf/local.yaml): its whole page, the section's figures read from its own tables."""
    import pyarrow.parquet as pq

    run = tmp_path / "run"
    shutil.copytree(local_reference_run, run, ignore=shutil.ignore_patterns("report.*"))
    summary = json.loads((run / "filter" / "summary.json").read_text())
    dropped = pq.read_table(run / "filter" / "dropped").to_pylist()
    data = build_report_data(str(run), (FILTER,))
    for source in data["sources"]:
        mine = [r["reason"] for r in dropped if r["source"] == source]
        assert data["sources"][source]["filtered"] == {k: mine.count(k) for k in set(mine)}
    per_rule: dict[tuple[str, str], int] = {}
    for r in dropped:
        per_rule[(r["source"], r["reason"])] = per_rule.get((r["source"], r["reason"]), 0) + 1
    # a rule draws a histogram when it measured a document (its counts, outside bins included, are not all 0)
    measures = {rule: m for rule, m in summary["measures"].items() if any(sum(c) for c in m["counts"].values())}
    with_threshold = {rule for rule, m in measures.items() if m["threshold"] is not None}
    shown = sum(min(3, n) for n in per_rule.values())
    _check_section(write_reports(str(run), (FILTER,))[1], with_threshold, len(measures) + 1, shown)
