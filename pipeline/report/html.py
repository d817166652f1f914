"""``report.html``: one self-contained page rendered from ``report.json`` (no server, no script, no fetch).

Every piece of document text is HTML-escaped; near-duplicate pairs are shown side by side with the
words that differ highlighted.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence

from pipeline.report import svg
from pipeline.report.html_parts import esc as _esc
from pipeline.report.html_parts import table as _table
from pipeline.report.spans_html import spans_parts
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


def highlight_differences(text: str, other: str) -> str:
    """``text`` escaped, with the words that are not in the aligned ``other`` wrapped in ``<mark>``."""
    words, others = re.split(r"(\s+)", text), re.split(r"(\s+)", other)
    out: list[str] = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, words, others, autojunk=False).get_opcodes():
        for word in words[i1:i2]:  # spaces stay unmarked, each differing word is marked
            out.append(_esc(word) if tag == "equal" or not word.strip() else f"<mark>{_esc(word)}</mark>")
    return "".join(out)


def _where(doc: dict) -> str:
    return (
        f'<div class="meta">doc_id {_esc(doc["doc_id"])} · {_esc(doc["source"])} · {_esc(doc["file"])} '
        f"at {_esc(doc['position'])} · {doc['characters']:,} characters</div>"
    )


def _near_pair(example: dict) -> str:
    survivor, removed = example["survivor"], example["removed"]
    return (
        f"<p>cluster of {example['cluster_size']} · exact Jaccard <b>{example['jaccard']:.3f}</b></p>"
        '<div class="pair">'
        f'<div class="doc"><b>kept (survivor)</b>{_where(survivor)}'
        f"<pre>{highlight_differences(survivor['excerpt'], removed['excerpt'])}</pre></div>"
        f'<div class="doc"><b>removed</b>{_where(removed)}'
        f"<pre>{highlight_differences(removed['excerpt'], survivor['excerpt'])}</pre></div></div>"
    )


def _exact_group(example: dict) -> str:
    copies = ", ".join(f"{_esc(c['source'])}:{_esc(c['file'])}@{_esc(c['position'])}" for c in example["copies"])
    return (
        f'<div class="doc"><b>{example["size"]} identical copies</b> (cluster of {example["cluster_size"]})'
        f'<div class="meta">{copies}</div><pre>{_esc(example["document"]["excerpt"])}</pre></div>'
    )


def _examples(data: dict) -> list[str]:
    parts = ["<h2>What dedup removed, per source</h2>"]
    for source, found in data["dedup"]["examples"].items():
        parts.append(f"<h3>{_esc(source)}</h3>")
        if not found["near_duplicates"] and not found["exact_duplicates"]:
            parts.append("<p>No duplicate removed.</p>")
        if found["near_duplicates"]:
            parts.append("<h4>Near-duplicates (differing words highlighted)</h4>")
            parts += [_near_pair(e) for e in found["near_duplicates"]]
        if found["exact_duplicates"]:
            parts.append("<h4>Exact duplicates</h4>")
            parts += [_exact_group(e) for e in found["exact_duplicates"]]
    rejects = data["rejects"]["examples"]
    if rejects:
        parts.append("<h2>What ingest rejected, per reason</h2>")
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


def _dedup(data: dict) -> list[str]:
    dedup, charts = data["dedup"], []
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
    return ["<h2>Dedup</h2>", '<div class="charts">', *charts, "</div>", _table(["count", "value"], counts)]


def _timeline(data: dict) -> list[str]:
    stages = [(r["stage"], r["start"] or 0.0, r["seconds"]) for r in data["timeline"]["stages"]]
    steps, start = [], 0.0
    for r in data["timeline"]["dedup_steps"]:
        steps.append((f"dedup: {r['step']}", start, r["seconds"]))
        start += r["seconds"]
    parts = ["<h2>Timeline</h2>"]
    if stages:
        parts.append(svg.timeline_chart(stages, "stages (seconds from the start of the run)"))
    if steps:
        parts.append(svg.timeline_chart(steps, "dedup steps (seconds from the start of dedup)"))
    rows = [[n, f"{d:.1f}"] for n, _, d in stages + steps]
    return [*parts, _table(["stage or step", "seconds"], rows)]


def _tokens_and_blend(data: dict) -> list[str]:
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
    blend = data["blend"]
    if blend:
        charts.append(
            svg.bar_chart(
                "blend: weights and achieved shares",
                blend["sources"],
                {"weight": _shares(blend["weights"]), "achieved": blend["achieved"]},
                "",
                "share",
            )
        )
    parts += ['<div class="charts">', *charts, "</div>"]
    if blend:
        parts.append(
            f'<p class="meta">{_esc(blend["mode"])}, {blend["size"]:,} samples: '
            f"<code>--data-path {_esc(blend['data_path'])}</code></p>"
        )
    if blend and blend.get("rehydrate"):
        shares = dict(zip(blend["sources"], _shares(blend["weights"]), strict=True))
        rows = [  # a source blended by quality bucket: its buckets' weights together
            [src, round(w, 4), r["distinct_documents"], r["copies_added"], r["distinct_documents"] + r["copies_added"]]
            for src, r in blend["rehydrate"].items()
            for w in [sum(x for n, x in shares.items() if n == src or n.startswith(f"{src}/"))]
        ]
        parts.append('<p class="meta">rehydration (blend.rehydrate): duplicates put back by cluster size</p>')
        parts.append(_table(["source", "weight", "distinct documents", "copies added", "documents in the blend"], rows))
    return parts


def _shares(weights: list[float]) -> list[float]:
    total = sum(weights)
    return [w / total if total else 0.0 for w in weights]


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
    "dedup",
    "rejects",
}
REPORT_KEYS |= {"tokens", "blend", "after_run_errors", "spans"}


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
    (``Stage.report_html``) after the overview."""
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
        *(part for stage in stages for part in stage.report_html(data)),
        *_dedup(data),
        *_examples(data),
        *spans_parts(data),
        *_tokens_and_blend(data),
        *_timeline(data),
        *_stage_sections(data, {key for stage in stages for key in stage.report_keys}),
        "<h2>Parameters</h2>",
        _table(["key", "value"], params),
    ]
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>Run report: {_esc(data['run'])}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>"
    )
