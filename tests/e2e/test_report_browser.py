"""``report.html`` of the sample run in a real headless Chromium (Debian's ``chromium``): it loads without
console errors, every chart renders with a non-zero size, and at 1280 and 800 px nothing is off the page.

Without Chromium the test skips, except in CI (``PIPELINE_REQUIRE_ORACLES=1``), where it fails.
``PIPELINE_REPORT_SCREENSHOTS=DIR`` keeps the two full-page screenshots in DIR.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from pipeline.report.html import render_html
from pipeline.report.html_parts import highlight_differences
from pipeline.run.registry import STAGES
from tests.browser_cdp import Chromium, find_chromium
from tests.oracles import missing_tool

WIDTHS = (1280, 800)
CHARTS = 7  # cluster sizes, S-curve, tokens per source, token lengths, blend, stage and dedup-step timelines

PAGE_FACTS = """(() => {
  const charts = Array.from(document.querySelectorAll('svg, img')).map(e => {
    const r = e.getBoundingClientRect();
    return {w: r.width, h: r.height, marks: e.querySelectorAll('rect, path, line').length};
  });
  const width = window.innerWidth;
  const outside = Array.from(document.querySelectorAll('body *'))
    .filter(e => e.getBoundingClientRect().right > width + 1 && !e.closest('.scroll, svg'))
    .map(e => e.tagName + ' ' + (e.textContent || '').slice(0, 40));
  const hiddenScroll = Array.from(document.querySelectorAll('.scroll'))
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => (e.textContent || '').slice(0, 40));
  return {charts, outside, hiddenScroll, scrollWidth: document.documentElement.scrollWidth, width,
          marks: document.querySelectorAll('mark').length};
})()"""


def _chromium() -> str:
    path = find_chromium()
    if path is None:
        missing_tool("headless Chromium not found (Debian: apt-get install -y chromium)")
    return path


def _png_width(path: Path) -> int:
    return struct.unpack(">I", path.read_bytes()[16:20])[0]


def _errors(events: list[dict]) -> list[str]:
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            found.append(str(params.get("exceptionDetails")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            found.append(str(params.get("args")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            found.append(params["entry"].get("text", ""))
    return found


@pytest.mark.spark
def test_report_renders_in_chromium_at_two_widths(local_reference_run: Path, tmp_path: Path) -> None:
    report = local_reference_run / "report.html"
    assert report.is_file()
    browser = Chromium(_chromium())
    try:
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            browser.call(domain)
        browser.call("Page.navigate", {"url": report.resolve().as_uri()})
        browser.wait_for("Page.loadEventFired")
        for width in WIDTHS:
            browser.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            )
            facts = browser.evaluate(PAGE_FACTS)
            assert len(facts["charts"]) >= CHARTS, facts["charts"]
            assert all(c["w"] > 50 and c["h"] > 50 and c["marks"] > 0 for c in facts["charts"]), facts["charts"]
            assert facts["scrollWidth"] <= facts["width"] == width, facts
            assert facts["outside"] == [] and facts["hiddenScroll"] == [], facts
            assert facts["marks"] > 0, "no differing word is highlighted in the near-duplicate pairs"
            shot = tmp_path / f"report_{width}.png"
            browser.screenshot(str(shot))
            assert _png_width(shot) == width
            keep = os.environ.get("PIPELINE_REPORT_SCREENSHOTS")
            if keep:
                shutil.copy2(shot, Path(keep) / shot.name)
        assert _errors(browser.events) == []
    finally:
        browser.close()


def test_document_text_is_escaped_and_differences_are_marked() -> None:
    marked = highlight_differences("keep <b>this</b> & one word", "keep <b>this</b> & two word")
    assert marked == "keep &lt;b&gt;this&lt;/b&gt; &amp; <mark>one</mark> word"
    doc = {
        "doc_id": 1,
        "source": "web<script>",
        "file": "a.jsonl",
        "position": 0,
        "characters": 30,
        "excerpt": "<script>alert('x')</script> hello",
    }
    data = {
        "run": "/tmp/<run>",
        "generated": "2026-01-01T00:00:00Z",
        "summary": {
            "documents_read": 2,
            "rejected": 0,
            "duplicates_removed": 1,
            "survivors": 1,
            "written": 1,
            "survivor_ratio": 0.5,
            "rejected_ratio": 0.0,
            "duplicate_ratio": 0.5,
            "tokens": None,
        },
        "sources": {},
        "timeline": {"stages": [], "dedup_steps": []},
        "parameters": [{"key": "k", "value": "<v>"}],
        "dedup": {
            "counts": {},
            "cluster_size_histogram": {},
            "lsh": None,
            "examples": {
                "web": {
                    "near_duplicates": [
                        {
                            "component": 1,
                            "cluster_size": 2,
                            "jaccard": 0.8,
                            "survivor": doc,
                            "removed": {**doc, "excerpt": "<script>alert('y')</script> hello"},
                        }
                    ],
                    "exact_duplicates": [],
                }
            },
        },
        "rejects": {
            "examples": {
                "web": {
                    "malformed_json": [
                        {"file": "f", "position": 3, "detail": "<i>", "excerpt": '{"text": "<img src=x>'}
                    ]
                }
            }
        },
        "tokens": {"per_source": {}, "length_histogram": {}},
        "blend": None,
    }
    page = render_html(data, STAGES)  # the dedup stage draws the pairs, the page the rejects
    assert "<script" not in page and "<img" not in page and "<i>" not in page and "<v>" not in page
    assert "&lt;script&gt;alert(" in page and "&lt;img src=x&gt;" in page and "<mark>" in page
