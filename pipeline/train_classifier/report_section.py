"""The train-classifier stage's entries of report.json (docs/stages.md, The train-classifier stage), read from the
run directory alone (pyarrow, no Spark): the held-out metrics, and once the filter stage has scored the run with
``model: run``, the distribution of the positives' label score per source with examples at the top, the bottom
and the threshold."""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.stage_api import layout
from pipeline.stage_api.run_tables import has_table, iter_rows, rows_by_doc_id

BINS = 10  # equal bins of [0, 1]
EXAMPLES = 3
EXCERPT = 200


def _json(run: str, name: str) -> dict[str, Any]:
    path = storage.join(run, *layout.parts(name))
    found: dict[str, Any] = storage.read_json(path) if storage.exists(path) else {}
    return found


def report_section(run: str) -> dict[str, Any]:
    """``{"classifier": {"holdout": ..., "holdout_by_source": ..., "scores": {...}}}``."""
    metrics = _json(run, layout.CLASSIFIER_METRICS)
    label = metrics.get("label", "")
    section: dict[str, Any] = {
        "label": label,
        "examples": metrics.get("examples"),
        "holdout": {k: metrics.get("holdout", {}).get(k) for k in ("precision", "recall", "roc_auc", "deciles")},
        "holdout_by_source": {
            name: {k: row.get(k) for k in ("examples", "precision", "recall", "roc_auc")}
            for name, row in metrics.get("holdout_by_source", {}).items()
        },
    }
    scored = _scored(run, f"classifier_{label}") if label else []
    if scored:
        section["scores"] = _distribution(run, scored, _threshold(run, label))
    return {"classifier": section}


def _scored(run: str, column: str) -> list[tuple[float, int, str]]:
    """(score, doc_id, source) of every document the filter stage scored: those it kept (the column) and those the
    classifier dropped (their ``value``); no text is read."""
    found: list[tuple[float, int, str]] = []
    if has_table(run, layout.FILTERED):
        for rows in iter_rows(run, layout.FILTERED, ["doc_id", "source", column]):
            found.extend((r[column], r["doc_id"], r["source"]) for r in rows if r.get(column) is not None)
    if has_table(run, layout.FILTER_DROPPED):
        for rows in iter_rows(run, layout.FILTER_DROPPED, ["doc_id", "source", "reason", "value"]):
            found.extend(
                (r["value"], r["doc_id"], r["source"])
                for r in rows
                if r["reason"].startswith("fasttext_classifier.") and r["value"] is not None
            )
    return found


def _excerpts(run: str, doc_ids: list[int]) -> dict[int, str]:
    """The first characters of the chosen documents' texts (kept: filter/documents/, dropped: their excerpt)."""
    found: dict[int, str] = {}
    if has_table(run, layout.FILTER_DROPPED):
        for i, row in rows_by_doc_id(run, layout.FILTER_DROPPED, doc_ids, ["doc_id", "excerpt"]).items():
            found[i] = (row["excerpt"] or "")[:EXCERPT]
    if has_table(run, layout.FILTERED):
        for i, row in rows_by_doc_id(run, layout.FILTERED, doc_ids, ["doc_id", "text"]).items():
            found[i] = (row["text"] or "")[:EXCERPT]
    return found


def _threshold(run: str, label: str) -> float | None:
    """The run's keep_top cut score, else the first keep threshold of ``label`` (None: neither)."""
    summary = _json(run, layout.FILTER_SUMMARY)
    cut = (summary.get("ranking") or {}).get("cut")
    if cut:
        return float(cut[0])
    for entries in summary.get("filters", {}).values():
        for entry in entries:
            for name, score in (entry.get("keep_labels") or []) if isinstance(entry, dict) else []:
                if name == label:
                    return float(score)
    return None


def _distribution(run: str, scored: list[tuple[float, int, str]], threshold: float | None) -> dict[str, Any]:
    """Per source the histogram of scores over ``BINS`` equal bins of [0, 1] (a score above 1, fastText's
    1.00001, in the last), and examples: the highest, the lowest and the nearest the threshold (ties by doc_id)."""
    edges = np.linspace(0.0, 1.0, BINS + 1)
    by_source: dict[str, list[float]] = {}
    for score, _, source in scored:
        by_source.setdefault(source, []).append(score)
    histograms = {
        source: np.histogram(np.clip(values, 0.0, 1.0), bins=edges)[0].tolist()
        for source, values in sorted(by_source.items())
    }
    chosen = {
        "top": heapq.nsmallest(EXAMPLES, scored, key=lambda r: (-r[0], r[1])),
        "bottom": heapq.nsmallest(EXAMPLES, scored, key=lambda r: (r[0], r[1])),
    }
    if threshold is not None:
        chosen["threshold"] = heapq.nsmallest(EXAMPLES, scored, key=lambda r: (abs(r[0] - threshold), r[1]))
    texts = _excerpts(run, sorted({d for rows in chosen.values() for _, d, _ in rows}))
    examples = {
        kind: [{"doc_id": d, "source": s, "score": round(x, 6), "excerpt": texts.get(d, "")} for x, d, s in rows]
        for kind, rows in chosen.items()
    }
    return {"bins": edges.tolist(), "histograms": histograms, "threshold": threshold, "examples": examples}
