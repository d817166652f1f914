"""Write a run's ``report.json`` and ``report.html`` (at the end of a run, or again with ``pipeline report``)."""

from __future__ import annotations

from pipeline import storage
from pipeline.report.data import build_report_data


def write_reports(run: str) -> tuple[str, str]:
    """Write ``<run>/report.json`` and ``<run>/report.html`` from the run directory; returns both paths."""
    from pipeline.report.html import render_html

    data = build_report_data(run)
    json_path, html_path = storage.join(run, "report.json"), storage.join(run, "report.html")
    storage.write_json(json_path, data)
    storage.write_text(html_path, render_html(data))
    return json_path, html_path
