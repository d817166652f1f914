"""The spans stage's section of report.html, Repeated spans, drawn from report.json's ``spans`` entry (docs/spans.md,
Report; :mod:`pipeline.spans.report_section` makes it) with the report's generic HTML parts: bytes and ranges
removed per source and kind, documents changed, emptied and too short, and the most repeated spans."""

from __future__ import annotations

from typing import Any

from pipeline.report.html_parts import table


def report_html(data: dict[str, Any]) -> list[str]:
    """The section's HTML pieces (none when the run had no spans stage)."""
    spans = data.get("spans")
    if not isinstance(spans, dict):
        return []
    removed_bytes, removed_ranges = spans.get("removed_bytes", {}), spans.get("removed_ranges", {})
    kinds = sorted({kind for row in removed_bytes.values() for kind in row})
    rows = [
        [
            source,
            *(removed_bytes[source].get(kind, 0) for kind in kinds),
            *(removed_ranges.get(source, {}).get(kind, 0) for kind in kinds),
            spans.get("changed", {}).get(source, 0),
            spans.get("emptied", {}).get(source, 0),
            spans.get("too_short", {}).get(source, 0),
        ]
        for source in sorted(removed_bytes)
    ]
    headers = [
        "source",
        *(f"bytes removed: {kind}" for kind in kinds),
        *(f"ranges: {kind}" for kind in kinds),
        "documents changed",
        "emptied",
        "too short",
    ]
    parts = ["<h2>Repeated spans</h2>", table(headers, rows)]
    repeated = spans.get("most_repeated") or []
    if repeated:
        parts.append('<p class="meta">the most repeated removed spans (one per kept copy)</p>')
        parts.append(
            table(
                ["kind", "copies", "bytes", "kept copy's doc_id", "example doc_id", "text"],
                [
                    [r["kind"], r["copies"], r["bytes"], r["kept_doc_id"], r["example_doc_id"], r["text"] or ""]
                    for r in repeated
                ],
            )
        )
    return parts
