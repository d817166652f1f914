"""End-of-run summary: a text table for the console and ``report.html`` with embedded plots."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping, Sequence

from pipeline import storage
from pipeline.run.context import RunContext
from pipeline.run.registry import STAGE_NAMES


def summary_text(data: dict) -> str:
    """A few lines a person reads at the end of a run: per-stage times, per-source accounting, blend."""
    lines = ["stage             seconds"]
    stages = data.get("stages", {})
    for name in [n for n in STAGE_NAMES if n in stages]:
        lines.append(f"  {name:<16}{stages[name].get('seconds', 0):>8.1f}")
    table = data.get("accounting", {})
    if table:
        lines.append("source        read  rejected  removed  survivors  written")
        config_order = [s["name"] for s in data.get("config", {}).get("sources", [])]
        for name in [n for n in config_order if n in table] + sorted(set(table) - set(config_order)):
            row = table[name]
            lines.append(f"  {name:<10}{row['documents_read']:>6}{row['rejected']:>10}{row['duplicates_removed']:>9}"
                         f"{row['survivors']:>11}{row['written']:>9}")
    left_out = data.get("stages", {}).get("merge-blend", {}).get("counts", {}).get("left_out") or []
    for entry in left_out:
        if isinstance(entry, dict):
            lines.append(f"left out of the blend: {entry['source']} (weight {entry['weight']}: {entry['why']})")
    blend = data.get("stages", {}).get("merge-blend", {}).get("counts", {}).get("blend")
    if blend:
        lines.append(f"blend ({blend['mode']}, S={blend['size']}): --data-path {blend['data_path']}")
    return "\n".join(lines)


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _bar(title: str, labels: list[str], series: Mapping[str, Sequence[float]], xlabel: str = "") -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    width = 0.8 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(labels))], values, width=width, label=name)
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(labels))], labels, rotation=30)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    if len(series) > 1:
        ax.legend()
    out = _png(fig)
    plt.close(fig)
    return out


def _edge_similarities(ctx: RunContext) -> list[float]:
    """Exact Jaccard of every verified candidate edge (empty when verification was off)."""
    import pyarrow.parquet as pq

    path = ctx.path("dedup", "edges")
    if not storage.exists(path):
        return []
    fs, inner = storage.resolve(path)
    values = pq.read_table(inner, columns=["jaccard"], filesystem=fs).column("jaccard").to_pylist()
    return [v for v in values if v is not None]


def _table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def write_html(ctx: RunContext) -> str:
    """Write ``<run>/report.html`` and return its path."""
    data = ctx.manifest.data
    stages = data.get("stages", {})
    parts = [f"<h1>Run report: {html.escape(ctx.run_dir)}</h1>", "<h2>Stages</h2>",
             _table(["stage", "seconds", "finished"],
                    [[n, i.get("seconds"), i.get("finished")] for n, i in stages.items()])]
    if data.get("accounting"):
        rows = [[n, *r.values()] for n, r in data["accounting"].items()]
        parts += ["<h2>Documents per source</h2>",
                  _table(["source", "read", "rejected", "duplicates removed", "survivors", "written"], rows)]
    ingest = stages.get("ingest", {}).get("counts", {}).get("sources", {})
    reasons = sorted({r for s in ingest.values() for r in s["rejects_by_reason"]})
    if reasons:
        parts += ["<h2>Reject reasons</h2>", _table(["source", *reasons], [
            [n, *[s["rejects_by_reason"].get(r, 0) for r in reasons]] for n, s in ingest.items()])]
    report_path = ctx.path("dedup", "report.json")
    if storage.exists(report_path):
        dedup = storage.read_json(report_path)
        hist = dedup["cluster_size_histogram"]
        if hist:
            img = _bar("duplicate clusters by size", list(hist), {"clusters": list(hist.values())}, "cluster size")
            parts += ["<h2>Near-duplicates</h2>", f'<img src="data:image/png;base64,{img}">']
        sims = _edge_similarities(ctx)
        if sims:
            edges = [round(0.05 * i, 2) for i in range(21)]
            counts = [sum(1 for s in sims if lo <= s < hi) for lo, hi in zip(edges, edges[1:] + [1.01], strict=False)]
            img = _bar("exact Jaccard of candidate edges", [f"{e:.2f}" for e in edges], {"edges": counts})
            parts += [f'<img src="data:image/png;base64,{img}">']
        parts += ["<pre>" + html.escape(str(dedup["parameters"])) + "</pre>"]
    tokenize = stages.get("tokenize", {}).get("counts", {}).get("sources", {})
    if tokenize:
        img = _bar("tokens per source", list(tokenize), {"tokens": [s["tokens"] for s in tokenize.values()]})
        parts += ["<h2>Tokens</h2>", f'<img src="data:image/png;base64,{img}">']
    blend = stages.get("merge-blend", {}).get("counts", {}).get("blend")
    if blend:
        img = _bar("blend: weights and achieved ratios", blend["sources"],
                   {"weight": blend["weights"], "achieved": blend["achieved_ratios"]})
        parts += ["<h2>Blend</h2>", f'<img src="data:image/png;base64,{img}">',
                  f"<p><code>--data-path {html.escape(blend['data_path'])}</code></p>"]
    style = "body{font-family:sans-serif;max-width:60em;margin:2em auto}td,th{padding:2px 8px;border:1px solid #ccc}"
    head = f"<!doctype html><html><head><meta charset='utf-8'><style>{style}</style></head>"
    page = f"{head}<body>{''.join(parts)}</body></html>"
    path = ctx.path("report.html")
    storage.write_text(path, page)
    return path
