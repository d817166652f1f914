"""Write a run's ``report.json`` and ``report.html`` (at the end of a run, or again with ``pipeline report``)."""

from __future__ import annotations

from pipeline import storage
from pipeline.report.data import build_report_data
from pipeline.report.html import render_html
from pipeline.stage_api import layout
from pipeline.stage_api.stage import Stage


def write_reports(run: str, stages: tuple[Stage, ...] = ()) -> tuple[str, str]:
    """Write ``<run>/report.json`` and ``<run>/report.html`` from the run directory (``stages`` add the sections
    they own); returns both paths."""
    data = build_report_data(run, stages)
    json_path, html_path = storage.join(run, layout.REPORT_JSON), storage.join(run, layout.REPORT_HTML)
    storage.write_json(json_path, data)
    storage.write_text(html_path, render_html(data, stages))
    return json_path, html_path
