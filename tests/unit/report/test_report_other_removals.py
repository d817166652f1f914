"""Runs that decontaminate or keep a dedup index remove documents besides within-run duplicates: the report's
summary, its HTML page, the ``--json`` summary and the console summary all show those removals, so that read =
rejected + every removal + survivors holds on what a reader sees (docs/report_schema.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.cli.report import machine_summary
from pipeline.report.data import build_report_data
from pipeline.report.html import render_html
from pipeline.report.summary import summary_text

SCHEMA = Path(__file__).resolve().parents[3] / "pipeline" / "report" / "schema.json"
ROWS = {  # per source: read = rejected + duplicates removed + contaminated + earlier runs + survivors
    "web": {"documents_read": 100, "rejected": 5, "duplicates_removed": 20, "contaminated": 7,
            "duplicates_of_earlier_runs": 11, "survivors": 57, "written": 57},
    "code": {"documents_read": 40, "rejected": 0, "duplicates_removed": 3, "contaminated": 2,
             "duplicates_of_earlier_runs": 0, "survivors": 35, "written": 35},
}  # fmt: skip


def _run(tmp_path: Path, rows: dict) -> str:
    manifest = {"config": {"sources": [{"name": "web"}, {"name": "code"}]}, "stages": {}, "accounting": rows}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return str(tmp_path)


def _validate(data: dict) -> None:
    import jsonschema

    jsonschema.validate(data, json.loads(SCHEMA.read_text()), cls=jsonschema.Draft202012Validator)


def test_summary_totals_every_removal_and_the_equation_holds(tmp_path):
    data = build_report_data(_run(tmp_path, ROWS))
    _validate(data)
    s = data["summary"]
    assert (s["contaminated"], s["duplicates_of_earlier_runs"]) == (9, 11)
    removed = s["rejected"] + s["duplicates_removed"] + s["contaminated"] + s["duplicates_of_earlier_runs"]
    assert s["documents_read"] == 140 == removed + s["survivors"]
    sources = machine_summary(data)["sources"]
    assert sources["web"]["contaminated"] == 7 and sources["code"]["duplicates_of_earlier_runs"] == 0


def test_html_shows_the_removals_as_figures_and_columns(tmp_path):
    page = render_html(build_report_data(_run(tmp_path, ROWS)))
    kpis = dict(re.findall(r"<div>([a-z ]+)<b>([\d,]+)</b></div>", page))
    assert kpis["contaminated"] == "9" and kpis["duplicates of earlier runs"] == "11"
    header = re.search(r"<tr>(<th>source</th>.*?)</tr>", page).group(1)
    assert re.findall(r"<th>([^<]*)</th>", header)[3:6] == [
        "duplicates removed",
        "contaminated",
        "duplicates of earlier runs",
    ]


def test_console_summary_names_the_removals(tmp_path):
    text = summary_text({"config": {"sources": [{"name": "web"}, {"name": "code"}]}, "accounting": ROWS})
    assert "contaminated: web 7, code 2" in text and "duplicates of earlier runs: web 11, code 0" in text


@pytest.mark.parametrize("render", [lambda d: json.dumps(d["summary"]), lambda d: render_html(d)])
def test_a_run_without_them_shows_neither(tmp_path, render):
    plain = {n: {k: v for k, v in r.items() if k not in ("contaminated", "duplicates_of_earlier_runs")} for n, r in
             ROWS.items()}  # fmt: skip
    data = build_report_data(_run(tmp_path, plain))
    _validate(data)
    out = render(data)
    assert "contaminated" not in out and "earlier" not in out
