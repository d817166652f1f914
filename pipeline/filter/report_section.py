"""The filter stage's ``filter_signals`` entry of report.json (see docs/report_schema.md) from ``filter/signals/``, no
Spark: per rule with a threshold, the histogram of the signal it compares (over every document its filter saw)
and a "what if" table: how many of those documents the filter would keep with the rule's threshold at each step
around the configured one, the other rules as configured (decided by the filter's own ``decide``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline import storage
from pipeline.filter import entries, registry
from pipeline.stage_api import layout

BINS = 40
STEPS = (0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)  # the configured threshold times these
MAX_ROWS = 200_000  # documents read from the signals table (the first row groups), to bound the report's memory


def report_section(run: str) -> dict[str, Any]:
    """``{"filter_signals": {...}}``, or nothing when the run has no signals."""
    import pyarrow.dataset as ds

    signals = storage.join(run, *layout.parts(layout.FILTER_SIGNALS))
    summary_path = storage.join(run, *layout.parts(layout.FILTER_SUMMARY))
    if not storage.exists(signals) or not storage.exists(summary_path):
        return {}
    summary = storage.read_json(summary_path)
    fs, inner = storage.resolve(signals)
    dataset = ds.dataset(inner, filesystem=fs, format="parquet", exclude_invalid_files=True)
    table = dataset.head(MAX_ROWS)
    rules: dict[str, Any] = {}
    for source, listed in (summary.get("filters") or {}).items():
        for entry in listed:
            rules.update(_rules(entry, source, table, rules))
    return {"filter_signals": {"documents": table.num_rows, "rules": rules}} if rules else {}


def _rules(entry: dict[str, Any], source: str, table: Any, done: dict[str, Any]) -> dict[str, Any]:
    """The histogram and "what if" steps of each rule of one filter entry (the first source's entry of a filter)."""
    import pyarrow.compute as pc

    name = entry["name"]
    cls = registry.filter_class(name)
    options = entries.checked(entry, f"filter.{name}")[1]
    made = cls(options)
    if not made.threshold_options() or not cls.can_redecide():
        return {}
    types = made.signal_types()
    columns = [f"{name}.{m}" for m in types]
    if not all(c in table.column_names for c in columns):
        return {}
    seen = table.filter(pc.equal(table.column("source"), source))
    first = columns[0]
    seen = seen.filter(pc.is_valid(seen.column(first)))
    signals = {m: seen.column(f"{name}.{m}").combine_chunks() for m in types}
    out: dict[str, Any] = {}
    for rule, (measure, option) in made.threshold_options().items():
        key = f"{name}.{rule}"
        limit = entry.get(option)
        if key in done or isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit <= 0:
            continue  # no threshold, or a rule turned off (-1)
        values = np.asarray(signals[measure].cast("double").to_numpy(zero_copy_only=False), np.float64)
        direction = made.directions()[rule]
        steps = []
        for factor in STEPS:
            step = limit * factor
            step = int(round(step)) if isinstance(limit, int) else step
            if isinstance(limit, float) and 0 <= limit <= 1 and step > 1:
                continue
            changed = cls(entries.checked({**entry, option: step}, f"filter.{name}")[1])
            kept = int(np.count_nonzero(changed.decide(signals, seen.num_rows).keep))
            steps.append({"threshold": step, "kept": kept})
        out[key] = {
            "source": source,
            "signal": f"{name}.{measure}",
            "threshold": limit,
            "direction": direction,
            "documents": seen.num_rows,
            **_histogram(values, float(limit)),
            "what_if": list({s["threshold"]: s for s in steps}.values()),
        }
    return out


def _histogram(values: np.ndarray, threshold: float) -> dict[str, Any]:
    """Equal bins from 0 (or the smallest value) to twice the threshold (at least the 99th percentile), with the
    values below and above them; NaN (undefined for a document) counted apart."""
    finite = values[np.isfinite(values)]
    low = min(0.0, float(finite.min())) if finite.size else 0.0
    high = max(2 * threshold, float(np.percentile(finite, 99)) if finite.size else 0.0, low + 1e-9)
    if 0 <= threshold <= 1 and (not finite.size or finite.max() <= 1):
        high = 1.0
    edges = [low + (high - low) * i / BINS for i in range(BINS + 1)]
    counts, _ = np.histogram(finite[finite <= high], bins=edges)
    return {
        "edges": [round(e, 12) for e in edges],
        "counts": counts.astype(int).tolist(),
        "underflow": 0,
        "overflow": int(np.count_nonzero(finite > high)),
        "undefined": int(values.size - finite.size),
        "mean": float(finite.mean()) if finite.size else None,
    }
