"""The dedup stage's sections of report.html, drawn from report.json's ``dedup`` entry (docs/report_schema.md;
:mod:`pipeline.dedup.report_section` makes it) with the report's generic HTML parts.

Dedup: the cluster sizes and the LSH S-curve with the measured Jaccard of the candidate pairs, and the counts;
then what it removed per source: near-duplicate pairs side by side with the differing words highlighted, and
groups of exact copies (document text escaped).
"""

from __future__ import annotations

from typing import Any

from pipeline.report import svg
from pipeline.report.html_parts import esc, highlight_differences, table


def report_html(data: dict[str, Any]) -> list[str]:
    """The page's Dedup section and its examples (none when report.json has no ``dedup`` entry)."""
    section = data.get("dedup")
    if not isinstance(section, dict):
        return []
    return [*_figures(section), *_examples(section)]


def _figures(dedup: dict[str, Any]) -> list[str]:
    charts = []
    hist = dedup["cluster_size_histogram"]
    if hist:
        charts.append(
            svg.bar_chart(
                "duplicate clusters by size",
                list(hist),
                {"clusters": list(hist.values())},
                "documents in the cluster",
                "clusters",
            )
        )
    lsh = dedup["lsh"]
    if lsh:
        charts.append(
            svg.s_curve_chart(
                [(p["jaccard"], p["probability"]) for p in lsh["s_curve"]],
                lsh["threshold"],
                lsh["candidate_jaccard_histogram"]["counts"],
                lsh["bands"],
                lsh["rows"],
            )
        )
    counts = [[k, v] for k, v in dedup["counts"].items()]
    return ["<h2>Dedup</h2>", '<div class="charts">', *charts, "</div>", table(["count", "value"], counts)]


def _where(doc: dict[str, Any]) -> str:
    return (
        f'<div class="meta">doc_id {esc(doc["doc_id"])} · {esc(doc["source"])} · {esc(doc["file"])} '
        f"at {esc(doc['position'])} · {doc['characters']:,} characters</div>"
    )


def _near_pair(example: dict[str, Any]) -> str:
    survivor, removed = example["survivor"], example["removed"]
    return (
        f"<p>cluster of {example['cluster_size']} · exact Jaccard <b>{example['jaccard']:.3f}</b></p>"
        '<div class="pair">'
        f'<div class="doc"><b>kept (survivor)</b>{_where(survivor)}'
        f"<pre>{highlight_differences(survivor['excerpt'], removed['excerpt'])}</pre></div>"
        f'<div class="doc"><b>removed</b>{_where(removed)}'
        f"<pre>{highlight_differences(removed['excerpt'], survivor['excerpt'])}</pre></div></div>"
    )


def _exact_group(example: dict[str, Any]) -> str:
    copies = ", ".join(f"{esc(c['source'])}:{esc(c['file'])}@{esc(c['position'])}" for c in example["copies"])
    return (
        f'<div class="doc"><b>{example["size"]} identical copies</b> (cluster of {example["cluster_size"]})'
        f'<div class="meta">{copies}</div><pre>{esc(example["document"]["excerpt"])}</pre></div>'
    )


def _examples(dedup: dict[str, Any]) -> list[str]:
    parts = ["<h2>What dedup removed, per source</h2>"]
    for source, found in dedup["examples"].items():
        parts.append(f"<h3>{esc(source)}</h3>")
        if not found["near_duplicates"] and not found["exact_duplicates"]:
            parts.append("<p>No duplicate removed.</p>")
        if found["near_duplicates"]:
            parts.append("<h4>Near-duplicates (differing words highlighted)</h4>")
            parts += [_near_pair(e) for e in found["near_duplicates"]]
        if found["exact_duplicates"]:
            parts.append("<h4>Exact duplicates</h4>")
            parts += [_exact_group(e) for e in found["exact_duplicates"]]
    return parts
