"""The merge-blend stage's parts of report.html, drawn from report.json's ``blend`` entry (docs/report_schema.md;
the stage's ``report`` makes it) with the report's generic HTML parts: the chart of the blend's weights against the
shares it achieved, beside the run's token charts (the page's Tokens and blend section), then the blend's size and
``--data-path`` and, with ``blend.rehydrate``, the documents put back per source.
"""

from __future__ import annotations

from typing import Any

from pipeline.report import svg
from pipeline.report.html_parts import esc, table


def report_charts(data: dict[str, Any]) -> list[str]:
    """The blend's weights and achieved shares as one chart (none when report.json has no ``blend`` entry)."""
    blend = data.get("blend")
    if not blend:
        return []
    series = {"weight": shares(blend["weights"]), "achieved": blend["achieved"]}
    return [svg.bar_chart("blend: weights and achieved shares", blend["sources"], series, "", "share")]


def report_html(data: dict[str, Any]) -> list[str]:
    """The blend's mode, size and data path, and its rehydration table (none without a ``blend`` entry)."""
    blend = data.get("blend")
    if not blend:
        return []
    parts = [
        f'<p class="meta">{esc(blend["mode"])}, {blend["size"]:,} samples: '
        f"<code>--data-path {esc(blend['data_path'])}</code></p>"
    ]
    if blend.get("rehydrate"):
        weights = dict(zip(blend["sources"], shares(blend["weights"]), strict=True))
        rows = [  # a source blended by quality bucket: its buckets' weights together
            [src, round(w, 4), r["distinct_documents"], r["copies_added"], r["distinct_documents"] + r["copies_added"]]
            for src, r in blend["rehydrate"].items()
            for w in [sum(x for n, x in weights.items() if n == src or n.startswith(f"{src}/"))]
        ]
        parts.append('<p class="meta">rehydration (blend.rehydrate): duplicates put back by cluster size</p>')
        parts.append(table(["source", "weight", "distinct documents", "copies added", "documents in the blend"], rows))
    return parts


def shares(weights: list[float]) -> list[float]:
    """The weights as shares of their sum (all 0 when they sum to 0)."""
    total = sum(weights)
    return [w / total if total else 0.0 for w in weights]
