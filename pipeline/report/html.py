"""``report.html``: one self-contained page rendered from ``report.json`` (no server, no script, no fetch).

The page assembly and the run's own sections (overview, rejected records, tokens and blend, timeline,
parameters); each stage draws its own sections (``Stage.report_html``) and the page places them, and a stage's
charts (``Stage.report_charts``: the blend's) stand beside the run's token charts. Every piece of
document text is HTML-escaped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pipeline.report import svg
from pipeline.report.html_parts import esc as _esc
from pipeline.report.html_parts import table as _table
from pipeline.report.summary import is_rule_reason
from pipeline.stage_api.stage import Stage

STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:72em;color:#222;line-height:1.4}
h1{font-size:1.5em;overflow-wrap:anywhere}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;border:1px solid #ccc;text-align:left;
vertical-align:top;overflow-wrap:break-word}td{overflow-wrap:anywhere}td.n{text-align:right;font-variant-numeric:tabular-nums}
.chart{width:100%;max-width:640px;height:auto;display:block;margin:.5em 0}
.chart text{font-size:11px;fill:#333}.chart .title{font-size:13px;font-weight:600}
.chart .axis{stroke:#666}.chart .grid{stroke:#eee}
.charts{display:flex;flex-wrap:wrap;gap:1em}.charts>.chart{flex:1 1 480px}
.pair{display:flex;flex-wrap:wrap;gap:1em;margin:.5em 0 1.5em}
.doc{flex:1 1 320px;min-width:0;border:1px solid #ccc;border-radius:4px;padding:.5em;background:#fafafa}
.doc pre,pre.excerpt{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85em;max-height:18em;overflow-y:auto;
margin:.3em 0 0}
mark{background:#ffd54f}.warn{background:#fff3cd;border-left:4px solid #e0a800;padding:.5em}
.meta{font-size:.85em;color:#555;overflow-wrap:anywhere}
.kpi{display:flex;flex-wrap:wrap;gap:1em}.kpi div{border:1px solid #ddd;border-radius:4px;padding:.4em .8em}
.kpi b{display:block;font-size:1.3em}
"""


def _rejects(data: dict) -> list[str]:
    rejects = data["rejects"]["examples"]
    if not rejects:
        return []
    parts = ["<h2>What ingest rejected, per reason</h2>"]
    for source, reasons in rejects.items():
        for reason, rows in reasons.items():
            parts.append(f"<h4>{_esc(source)}: {_esc(reason)}</h4>")
            parts += [
                f'<div class="meta">{_esc(r["file"])} at byte/row {_esc(r["position"])}'
                f"{' · ' + _esc(r['detail']) if r['detail'] else ''}</div>"
                f'<pre class="excerpt">{_esc(r["excerpt"])}</pre>'
                for r in rows
            ]
    return parts


FILTERED = "filtered"  # the overview's one column for every filter rule's removals


def overview_reasons(reasons: list[str]) -> list[str]:
    """The removal reasons of the overview: every ``<filter>.<rule>`` folded into one ``filtered`` column."""
    out: list[str] = []
    for reason in reasons:
        name = FILTERED if is_rule_reason(reason) else reason
        if name not in out:
            out.append(name)
    return out


def removal_figure(row: dict, reason: str) -> int:
    """A row's (a source's or the summary's) count for an overview reason."""
    if reason == FILTERED:
        return sum(n for k, n in (row.get("removed") or {}).items() if is_rule_reason(k))
    return int(row.get(reason, 0) or 0)


def _overview(data: dict) -> list[str]:
    s = data["summary"]
    ratio = "n/a" if s["survivor_ratio"] is None else f"{100 * s['survivor_ratio']:.1f} %"
    reasons = list(s.get("removed") or {"duplicates_removed": s["duplicates_removed"]})  # the run's removals
    reasons = overview_reasons(reasons)  # a filter's rules are one column here, by rule in the filter section
    kpis = [
        ("documents read", f"{s['documents_read']:,}"),
        ("rejected", f"{s['rejected']:,}"),
        *[(k.replace("_", " "), f"{removal_figure(s, k):,}") for k in reasons],
        ("written", f"{s['written']:,}"),
        ("survivor ratio", ratio),
        ("tokens", "n/a" if s["tokens"] is None else f"{s['tokens']:,}"),
    ]
    parts = [
        '<div class="kpi">' + "".join(f"<div>{_esc(k)}<b>{_esc(v)}</b></div>" for k, v in kpis) + "</div>",
        "<h2>Documents per source</h2>",
    ]
    rows = [
        [
            n,
            r.get("documents_read", 0),
            r.get("rejected", 0),
            *[removal_figure(r, k) for k in reasons],
            r.get("survivors", 0),
            r.get("written", 0),
            "" if r["survivor_ratio"] is None else f"{100 * r['survivor_ratio']:.1f} %",
        ]
        for n, r in data["sources"].items()
    ]
    parts.append(
        _table(
            ["source", "read", "rejected", *[k.replace("_", " ") for k in reasons]]
            + ["survivors", "written", "survivor ratio"],
            rows,
        )
    )
    reasons = sorted({k for r in data["sources"].values() for k in r["rejects_by_reason"]})
    if reasons:
        parts += [
            "<h3>Reject reasons</h3>",
            _table(
                ["source", *[k.replace("_", " ") for k in reasons]],
                [[n, *[r["rejects_by_reason"].get(k, 0) for k in reasons]] for n, r in data["sources"].items()],
            ),
        ]
    return parts


def _timeline(data: dict) -> list[str]:
    """The stages, then each stage's own steps (a ``timeline.<stage>_steps`` entry) from the start of that stage."""
    stages = [(r["stage"], r["start"] or 0.0, r["seconds"]) for r in data["timeline"]["stages"]]
    parts = ["<h2>Timeline</h2>"]
    if stages:
        parts.append(svg.timeline_chart(stages, "stages (seconds from the start of the run)"))
    rows = [[n, f"{d:.1f}"] for n, _, d in stages]
    for key, entries in data["timeline"].items():
        if key == "stages" or not key.endswith(STEPS):
            continue
        stage, steps, start = key.removesuffix(STEPS), [], 0.0
        for r in entries:
            steps.append((f"{stage}: {r['step']}", start, r["seconds"]))
            start += r["seconds"]
        if steps:
            parts.append(svg.timeline_chart(steps, f"{stage} steps (seconds from the start of {stage})"))
        rows += [[n, f"{d:.1f}"] for n, _, d in steps]
    return [*parts, _table(["stage or step", "seconds"], rows)]


def _tokens_and_blend(data: dict, stages: Sequence[Stage]) -> list[str]:
    """The run's token charts, with the charts the stages add beside them (``Stage.report_charts``: the blend's)."""
    parts, charts = ["<h2>Tokens and blend</h2>"], []
    per_source = data["tokens"]["per_source"]
    if per_source:
        charts.append(
            svg.bar_chart("tokens per source", list(per_source), {"tokens": list(per_source.values())}, "", "tokens")
        )
    hist = data["tokens"]["length_histogram"]
    if hist:
        edges = sorted({(b["min"], b["max_exclusive"]) for buckets in hist.values() for b in buckets})
        labels = [f"{lo:,}-{hi:,}" if hi - lo > 1 else f"{lo}" for lo, hi in edges]
        series: dict[str, Sequence[float]] = {
            src: [next((b["count"] for b in buckets if (b["min"], b["max_exclusive"]) == e), 0) for e in edges]
            for src, buckets in hist.items()
        }
        charts.append(svg.bar_chart("token-length distribution", labels, series, "tokens per document", "documents"))
    charts += [chart for stage in stages for chart in stage.report_charts(data)]
    return [*parts, '<div class="charts">', *charts, "</div>"]


# report.json's own keys; any other is a section a stage owns (Stage.report), shown as a table of its figures unless
# the stage draws it (Stage.report_keys)
REPORT_KEYS = {
    "format",
    "run",
    "generated",
    "complete",
    "summary",
    "sources",
    "timeline",
    "parameters",
    "rejects",
}
REPORT_KEYS |= {"tokens", "after_run_errors"}
STEPS = "_steps"  # timeline.<stage>_steps: a stage's own steps, drawn after the stages
# the page's own sections after the overview, in page order: a stage's sections (Stage.report_html) go, in run
# order, just before the one its Stage.report_before names
PLACES = ("rejects", "tokens", "timeline", "parameters")


def _incomplete(data: dict) -> list[str]:
    if data.get("complete", True):
        return []
    done = ", ".join(r["stage"] for r in data["timeline"]["stages"]) or "none"
    return [
        f'<p class="warn"><b>Incomplete run</b>: the accounting was never checked; finished stages: {_esc(done)}. '
        "The figures below cover those stages only.</p>"
    ]


def _after_run_errors(data: dict) -> list[str]:
    return [
        f'<p class="warn"><b>The {_esc(stage)} stage\'s last step failed</b> after the run: {_esc(why)}</p>'
        for stage, why in sorted((data.get("after_run_errors") or {}).items())
    ]


def _stage_sections(data: dict, drawn: set[str]) -> list[str]:
    parts: list[str] = []
    for key, section in data.items():
        if key in REPORT_KEYS or key in drawn or not isinstance(section, dict):
            continue
        rows = [[k, json.dumps(v) if not isinstance(v, str) else v] for k, v in section.items()]
        parts += [f"<h2>{_esc(key.replace('_', ' ').capitalize())}</h2>", _table(["figure", "value"], rows)]
    return parts


def render_html(data: dict, stages: Sequence[Stage] = ()) -> str:
    """The whole page for the ``report.json`` dictionary ``data``, with the sections ``stages`` draw themselves
    (``Stage.report_html``), each stage's before the page's own section its ``report_before`` names."""
    misplaced = [f"{s.name}: {s.report_before!r}" for s in stages if s.report_before not in PLACES]
    if misplaced:
        raise ValueError(f"Stage.report_before names no section of the page ({', '.join(PLACES)}): {misplaced}")

    def placed(place: str) -> list[str]:
        return [part for stage in stages if stage.report_before == place for part in stage.report_html(data)]

    params = [
        [p["key"], json.dumps(p["value"]) if not isinstance(p["value"], str) else p["value"]]
        for p in data["parameters"]
    ]
    body = [
        f"<h1>Run report: {_esc(data['run'])}</h1>",
        f'<p class="meta">generated {_esc(data["generated"])}</p>',
        *_incomplete(data),
        *_after_run_errors(data),
        *_overview(data),
        *placed("rejects"),
        *_rejects(data),
        *placed("tokens"),
        *_tokens_and_blend(data, stages),
        *placed("timeline"),
        *_timeline(data),
        *_stage_sections(data, {key for stage in stages for key in stage.report_keys}),
        *placed("parameters"),
        "<h2>Parameters</h2>",
        _table(["key", "value"], params),
    ]
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>Run report: {_esc(data['run'])}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>"
    )
