"""``report.json``: every figure of the run report, built from the run directory alone (no Spark).

The schema is ``pipeline/report/schema.json`` (documented in ``docs/report_schema.md``); ``report.html``
is rendered from this dictionary only, so the HTML shows nothing the JSON lacks.
"""

from __future__ import annotations

import calendar
import time
from typing import Any

from pipeline import storage
from pipeline.megatron.describe import document_lengths, length_histogram
from pipeline.megatron.reader import IndexedDataset
from pipeline.report import examples
from pipeline.report.summary import by_rule, removed_by_reason
from pipeline.stage_api import layout
from pipeline.stage_api.stage import Stage

FORMAT = "spark-pretrain-pipeline/report/1"
SOURCE_FIGURES = ("documents_read", "rejects_by_reason", "tokens")  # per-source figures a stage records


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """Dotted keys of a nested config (lists of scalars stay one value; sources become ``sources.<name>.*``)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        for item in value:
            _flatten(f"{prefix}.{item['name']}", {k: v for k, v in item.items() if k != "name"}, out)
    else:
        out[prefix] = value


def parameters(config: dict) -> list[dict[str, Any]]:
    """The run's config as ``[{"key": "dedup.threshold", "value": 0.7}, ...]`` (a table, not a dict dump)."""
    flat: dict[str, Any] = {}
    _flatten("", config, flat)
    return [{"key": k, "value": v} for k, v in flat.items()]


def _sources(manifest: dict, grouped: str | None = None) -> tuple[dict[str, dict], dict[str, Any]]:
    """Per-source accounting rows and their totals; ``grouped``: the key under which each also gets its removals by
    rule (``"<unit>.<rule>"`` reasons: a stage's ``removals_as``)."""
    stages = manifest.get("stages", {})
    accounting = manifest.get("accounting") or {}
    per_source: dict[str, dict] = {}  # what the stages recorded per source: rejects by reason, tokens, ...
    for info in stages.values():
        for name, row in ((info.get("counts") or {}).get("sources") or {}).items():
            if isinstance(row, dict):
                figures = per_source.setdefault(name, {})
                for key in SOURCE_FIGURES:
                    if key in row:
                        figures.setdefault(key, row[key])
    order = [s["name"] for s in manifest.get("config", {}).get("sources", [])]
    names = [n for n in order if n in accounting or n in per_source] + sorted(set(accounting) - set(order))
    out: dict[str, dict] = {}
    for name in names:
        figures = per_source.get(name, {})
        row = dict(accounting.get(name, {}))
        row.setdefault("documents_read", figures.get("documents_read", 0))
        row["survivor_ratio"] = _ratio(row.get("survivors", 0), row["documents_read"])
        row["rejects_by_reason"] = figures.get("rejects_by_reason", {})
        row["tokens"] = figures.get("tokens")
        out[name] = row
    for row in out.values():
        row["removed"] = removed_by_reason(row, manifest.get("order", {}).get("removed"))
        if grouped:
            row[grouped] = by_rule(row["removed"])
    reasons = list(dict.fromkeys(k for r in out.values() for k in r["removed"]))  # the run's, in stage order
    keys = ("documents_read", "rejected", "duplicates_removed", *reasons, "survivors", "written")
    totals: dict[str, Any] = {k: sum(int(r.get(k, 0) or 0) for r in out.values()) for k in keys}
    totals["removed"] = {k: totals[k] for k in reasons}
    if grouped:
        totals[grouped] = by_rule(totals["removed"])
        for rule in totals[grouped]:  # a stage's rules are counted under its `removals_as`, not as flat totals
            del totals[rule]
    return out, totals


def _timeline(manifest: dict) -> dict[str, Any]:
    """Stages in run order with start/end (seconds since the first start); a stage's own steps inside it are its
    section's (``dedup_steps``: none until the dedup stage adds them)."""
    rows = []
    for name, info in manifest.get("stages", {}).items():
        end = calendar.timegm(time.strptime(info["finished"], "%Y-%m-%dT%H:%M:%SZ")) if info.get("finished") else None
        rows.append({"stage": name, "seconds": info.get("seconds", 0), "finished": info.get("finished"), "_end": end})
    known = [r for r in rows if r["_end"] is not None]
    origin = min((r["_end"] - r["seconds"] for r in known), default=0.0)
    for row in rows:
        end = row.pop("_end")
        row["start"] = round(end - row["seconds"] - origin, 3) if end is not None else None
    rows.sort(key=lambda r: (r["start"] is None, r["start"] or 0.0))  # the order they ran in
    return {"stages": rows, "dedup_steps": []}


def _tokens(run: str, names: list[str]) -> dict[str, Any]:
    """Tokens per source and each source's token-length histogram, from ``megatron/<source>.idx``."""
    histograms: dict[str, list] = {}
    for name in names:
        prefix = storage.join(run, layout.MEGATRON, name)
        if not storage.is_local(prefix) or not storage.exists(prefix + ".idx"):
            continue  # remote or unpublished: the counts still come from the manifest
        histograms[name] = length_histogram(document_lengths(IndexedDataset(prefix)))
    return {"length_histogram": histograms}


def add_stage_sections(data: dict[str, Any], run: str, manifest: dict, stages: tuple[Stage, ...]) -> dict[str, Any]:
    """``data`` with the entries the stages own (``Stage.report``, from their recorded counts, in run order): a
    stage's dict entry is merged into the report's entry of that name, any other replaces it."""
    recorded = manifest.get("stages", {})
    for stage in stages:
        if stage.name in recorded:
            for key, value in (stage.report(run, recorded[stage.name].get("counts", {})) or {}).items():
                merge = isinstance(value, dict) and isinstance(data.get(key), dict)
                data[key] = {**data[key], **value} if merge else value
    return data


def build_report_data(
    run: str, stages: tuple[Stage, ...] = (), per_source: int = examples.PER_SOURCE
) -> dict[str, Any]:
    """The whole ``report.json`` of the run directory ``run``; ``stages`` add the sections they own."""
    manifest = storage.read_json(storage.join(run, layout.MANIFEST))
    ran = manifest.get("stages", {})
    grouped = next((s.removals_as for s in stages if s.removals_as and s.name in ran), None)
    sources, totals = _sources(manifest, grouped)
    tokens = {n: r["tokens"] for n, r in sources.items() if r.get("tokens") is not None}
    has_documents = storage.exists(storage.join(run, layout.DOCUMENTS))
    data: dict[str, Any] = {
        "format": FORMAT,
        "run": run,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "complete": "accounting" in manifest,  # False: killed or stopped early; the figures cover the stages shown
        "summary": {
            **totals,
            "survivor_ratio": _ratio(totals["survivors"], totals["documents_read"]),
            "rejected_ratio": _ratio(totals["rejected"], totals["documents_read"]),
            "duplicate_ratio": _ratio(totals["duplicates_removed"], totals["documents_read"]),
            "tokens": sum(tokens.values()) if tokens else None,
        },
        "sources": sources,
        "timeline": _timeline(manifest),
        "parameters": parameters(manifest.get("config", {})),
        # filled by the dedup stage's section (Stage.report) when it ran
        "dedup": {"counts": {}, "cluster_size_histogram": {}, "lsh": None, "examples": {}},
        "rejects": {"examples": examples.reject_examples(run, per_source) if has_documents else {}},
        "tokens": {"per_source": tokens, **_tokens(run, list(tokens))},
        "blend": None,
        # a stage's last step that failed after the run (a refused dedup index commit): stage -> why
        **({layout.AFTER_RUN_ERRORS: dict(failed)} if (failed := manifest.get(layout.AFTER_RUN_ERRORS)) else {}),
    }
    return add_stage_sections(data, run, manifest, stages)
