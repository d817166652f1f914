"""The filter stage's sections of report.html, drawn from report.json's ``filter`` and ``filter_signals`` entries
(docs/report_schema.md; :mod:`pipeline.filter.report_section` makes them) with the report's generic HTML parts.

Drops per filter and source, languages per source, and per rule the histogram of what it measured with its
threshold marked and a few dropped documents (escaped) with the value that failed; then per rule with a threshold,
the histogram of the signal it compares and what other thresholds would keep.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pipeline.report import svg
from pipeline.report.html_parts import esc, table

LANGUAGES_SHOWN = 20  # most frequent labels over all sources; the rest are summed as "other"


def report_html(data: dict[str, Any]) -> list[str]:
    """The page's filter and signals sections (each left out when report.json has not its entry)."""
    return [*filter_parts(data), *signals_parts(data)]


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def _drops(section: dict) -> list[str]:
    sources = section["sources"]
    names = list(sources)
    filters = list(dict.fromkeys(r.split(".", 1)[0] for r in section["rules"]))
    by_filter: dict[str, Sequence[float]] = {
        name: [sum(n for k, n in row["dropped"].items() if k.split(".", 1)[0] == f) for f in filters]
        for name, row in sources.items()
    }
    rows = [[rule, *[sources[n]["dropped"].get(rule, 0) for n in names]] for rule in section["rules"]]
    rows = [r + [sum(r[1:])] for r in rows if any(r[1:])]
    parts = ["<h3>Documents dropped, per rule and source</h3>"]
    if filters and any(any(v) for v in by_filter.values()):
        parts.append(svg.bar_chart("documents dropped per filter", filters, by_filter, "filter", "documents"))
    return [*parts, table(["rule", *names, "all sources"], rows) if rows else "<p>No document was dropped.</p>"]


def _languages(section: dict) -> list[str]:
    sources = section["sources"]
    totals: dict[str, int] = {}
    for row in sources.values():
        for label, n in row["languages"].items():
            totals[label] = totals.get(label, 0) + n
    if not totals:
        return []
    shown = sorted(totals, key=lambda k: (-totals[k], k))[:LANGUAGES_SHOWN]
    rows: list[list[Any]] = [[label, *[r["languages"].get(label, 0) for r in sources.values()]] for label in shown]
    if len(totals) > len(shown):
        rows.append(["other", *[sum(n for k, n in r["languages"].items() if k not in shown) for r in sources.values()]])
    return ["<h3>Languages per source</h3>", table(["language", *sources], rows)]


def _histogram(rule: str, measure: dict) -> str:
    series = {source: h["counts"] for source, h in measure["counts"].items()}
    outside = (
        sum(h["underflow"] for h in measure["counts"].values()),
        sum(h["overflow"] for h in measure["counts"].values()),
    )
    if not series:
        series = {"documents": [0] * (len(measure["edges"]) - 1)}
    return svg.histogram_chart(rule, measure["edges"], series, outside, measure["threshold"], measure["direction"])


def _example(source: str, example: dict) -> str:
    detail = f" · {esc(example['detail'])}" if example["detail"] else ""
    return (
        f'<div class="meta">doc_id {esc(example["doc_id"])} · {esc(source)} · value '
        f"<b>{esc(_number(example['value']))}</b>, threshold {esc(_number(example['threshold']))}{detail}</div>"
        f'<pre class="excerpt">{esc(example["excerpt"])}</pre>'
    )


def _rule(rule: str, section: dict) -> list[str]:
    measure = section["measures"].get(rule)
    dropped = {n: r["dropped"].get(rule, 0) for n, r in section["sources"].items()}
    counts = ", ".join(f"{n} {c:,}" for n, c in dropped.items())
    parts = [f"<h3>{esc(rule)}</h3>", f'<p class="meta">dropped: {esc(counts)}']
    if measure is not None and measure["threshold"] is not None:
        fails = "below" if measure["direction"] == "min" else "above"
        parts[-1] += f" · a document {fails} {esc(_number(measure['threshold']))} is dropped"
    parts[-1] += "</p>"
    if measure is not None and _measured(measure):
        parts.append(_histogram(rule, measure))
    for source, examples in section["examples"].get(rule, {}).items():
        parts += [_example(source, e) for e in examples]
    return parts


def _measured(measure: dict) -> bool:
    """True when the rule measured at least one document (a rule no document reached gets no empty chart)."""
    return any(sum(h["counts"]) + h["underflow"] + h["overflow"] for h in measure["counts"].values())


def filter_parts(data: dict) -> list[str]:
    """The page's filter section, or nothing when the run had no filter stage."""
    section = data.get("filter")
    if not section:
        return []
    sources = section["sources"]
    rows = [
        [
            name,
            r["read"],
            r["kept"],
            r["dropped_total"],
            f"{100 * r['kept'] / r['read']:.1f} %" if r["read"] else "",
            ", ".join(f"{k} {v:,}" for k, v in r["changed"].items() if v) or "none",
        ]
        for name, r in sources.items()
    ]
    parts = [
        '<section class="filter"><h2>Filter</h2>',
        table(["source", "read", "kept", "dropped", "kept ratio", "text rewritten (documents, by filter)"], rows),
        *_drops(section),
        *_languages(section),
    ]
    for rule in section["rules"]:
        parts += _rule(rule, section)
    if section["filters"]:
        entries = [
            [source, "none" if not steps else ", ".join(json.dumps(e, sort_keys=True) for e in steps)]
            for source, steps in section["filters"].items()
        ]
        parts += ["<h3>Filters as configured</h3>", table(["source", "filters, in order"], entries)]
    return [*parts, "</section>"]


def signals_parts(data: dict) -> list[str]:
    """The page's signals section (report.json's ``filter_signals``): per rule, the histogram of the signal it
    compares with its threshold drawn, and how many documents each threshold step would keep."""
    section = data.get("filter_signals")
    if not section or not section.get("rules"):
        return []
    parts = [
        '<section class="signals"><h2>Filter signals: what other thresholds would keep</h2>',
        f'<p class="meta">from filter/signals/ ({section["documents"]:,} documents read)</p>',
    ]
    for rule, entry in section["rules"].items():
        parts.append(f"<h3>{esc(rule)} · {esc(entry['signal'])}</h3>")
        outside = (entry["underflow"], entry["overflow"])
        title = (
            f"{entry['signal']} over the {entry['documents']:,} documents {rule.split('.')[0]} saw ({entry['source']})"
        )
        parts.append(
            svg.histogram_chart(
                title, entry["edges"], {"documents": entry["counts"]}, outside, entry["threshold"], entry["direction"]
            )
        )
        rows = [
            [
                _number(step["threshold"]) + (" (configured)" if step["threshold"] == entry["threshold"] else ""),
                f"{step['kept']:,}",
                f"{100 * step['kept'] / entry['documents']:.1f} %" if entry["documents"] else "",
            ]
            for step in entry["what_if"]
        ]
        parts.append(table(["threshold", "kept by the filter", "of the documents it saw"], rows))
    return [*parts, "</section>"]
