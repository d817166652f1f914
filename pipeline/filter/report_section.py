"""The filter stage's entries of report.json (docs/report_schema.md), no Spark.

``filter``, from ``filter/summary.json`` and ``filter/dropped``: per-source counts and each rule's histogram spelled
out (``edges``, ``counts``, ``underflow``, ``overflow``; the summary checked for the shape the stage promises) with a
few dropped documents per rule and source. ``filter_signals``, from ``filter/signals/``: per rule with a threshold,
the histogram of the signal it compares (over every document its filter saw) and a "what if" table: how many of
those documents the filter would keep with the rule's threshold at each step around the configured one, the other
rules as configured (decided by the filter's own ``decide``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.errors import PipelineError
from pipeline.filter import entries, registry
from pipeline.stage_api import layout
from pipeline.stage_api.run_tables import excerpt, has_table, iter_batches

BINS = 40
STEPS = (0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)  # the configured threshold times these
MAX_ROWS = 200_000  # documents read from the signals table (the first row groups), to bound the report's memory
PER_SOURCE = 3  # dropped documents shown per rule and source
EXCERPT_CHARS = 300
DROPPED_COLUMNS = ["doc_id", "source", "reason", "detail", "value", "threshold", "excerpt"]


def report_section(run: str, per_source: int = PER_SOURCE) -> dict[str, Any]:
    """``{"filter": {...}, "filter_signals": {...}}``, each left out when the run has not its files."""
    summary = summary_section(run, per_source)
    return {**({"filter": summary} if summary is not None else {}), **signals_section(run)}


def signals_section(run: str) -> dict[str, Any]:
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


class FilterSummaryError(PipelineError):
    """``filter/summary.json`` does not have the shape the filter stage promises."""


def has_filter_summary(run: str) -> bool:
    """True when the run's filter stage left its summary."""
    return storage.exists(storage.join(run, layout.FILTER_SUMMARY))


def _fail(key: str, why: str) -> FilterSummaryError:
    return FilterSummaryError(f"{layout.FILTER_SUMMARY}: {key} {why}")


def _is_count(value: Any) -> bool:
    """A non-negative whole number (``3`` or ``3.0``: a JSON writer may give either)."""
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    ) and float(value).is_integer()


def _counts(key: str, value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not all(_is_count(v) for v in value.values()):
        raise _fail(key, "must map names to counts (non-negative integers)")
    return {str(k): int(v) for k, v in value.items()}


def _source(name: str, row: Any) -> dict[str, Any]:
    key = f"sources.{name}"
    if not isinstance(row, dict):
        raise _fail(key, "must be an object")
    for field in ("read", "kept"):
        if not _is_count(row.get(field)):
            raise _fail(f"{key}.{field}", "must be a count (non-negative integer)")
    dropped = _counts(f"{key}.dropped", row.get("dropped", {}))
    return {
        "read": int(row["read"]),
        "kept": int(row["kept"]),
        "dropped": dropped,
        "dropped_total": sum(dropped.values()),
        "changed": _counts(f"{key}.changed", row.get("changed", {})),
        "languages": dict(
            sorted(_counts(f"{key}.languages", row.get("languages", {})).items(), key=lambda kv: (-kv[1], kv[0]))
        ),
    }


def _number(key: str, value: Any, nullable: bool = False) -> float | None:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(key, "must be a finite number")
    return float(value)


def _measure(rule: str, entry: Any) -> dict[str, Any]:
    key = f"measures.{rule}"
    if not isinstance(entry, dict):
        raise _fail(key, "must be an object")
    edges = entry.get("bins")
    if not isinstance(edges, list) or len(edges) < 2:
        raise _fail(f"{key}.bins", "must list at least two bin edges")
    edges = [float(_number(f"{key}.bins", e) or 0.0) for e in edges]
    if any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise _fail(f"{key}.bins", "must increase")
    direction = entry.get("direction")
    if direction not in ("min", "max") and not (direction is None and entry.get("threshold") is None):
        raise _fail(f"{key}.direction", f"must be 'min' or 'max' (null only without a threshold), not {direction!r}")
    bins = len(edges) - 1
    histograms: dict[str, dict[str, Any]] = {}
    for source, counts in (entry.get("counts") or {}).items():
        where = f"{key}.counts.{source}"
        if not isinstance(counts, list) or not all(_is_count(c) for c in counts):
            raise _fail(where, "must be a list of counts")
        counts = [int(c) for c in counts]
        if len(counts) == bins + 2:  # underflow, the bins, overflow
            histograms[source] = {"counts": counts[1:-1], "underflow": counts[0], "overflow": counts[-1]}
        elif len(counts) == bins:
            histograms[source] = {"counts": counts, "underflow": 0, "overflow": 0}
        else:
            raise _fail(where, f"has {len(counts)} counts for {len(edges)} edges (want {bins} or {bins + 2})")
    return {
        "threshold": _number(f"{key}.threshold", entry.get("threshold"), nullable=True),
        "direction": direction,
        "edges": edges,
        "counts": histograms,
    }


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _examples(run: str, wanted: dict[tuple[str, str], int], per_source: int) -> dict[str, dict[str, list]]:
    """Per rule and source, the first dropped documents (file order) of ``filter/dropped``."""
    out: dict[str, dict[str, list]] = {}
    if not has_table(run, layout.FILTER_DROPPED) or not wanted:
        return out
    left = {pair: min(n, per_source) for pair, n in wanted.items() if n > 0}
    for batch in iter_batches(run, layout.FILTER_DROPPED, DROPPED_COLUMNS):
        taken = []  # only the rows shown become Python rows, not the batch's every excerpt
        for i, pair in enumerate(zip(*(batch.column(c).to_pylist() for c in ("reason", "source")), strict=True)):
            if left.get(pair, 0) > 0:
                left[pair] -= 1
                taken.append(i)
        for row in batch.take(taken).to_pylist() if taken else ():
            out.setdefault(row["reason"], {}).setdefault(row["source"], []).append(
                {
                    "doc_id": row["doc_id"],
                    "value": _finite(row.get("value")),
                    "threshold": _finite(row.get("threshold")),
                    "detail": row.get("detail") or "",
                    "excerpt": excerpt(row.get("excerpt") or "", EXCERPT_CHARS),
                }
            )
        if not any(n > 0 for n in left.values()):
            break
    return out


def summary_section(run: str, per_source: int = PER_SOURCE) -> dict[str, Any] | None:
    """The ``filter`` section of ``report.json``, or None when the run has no filter summary."""
    if not has_filter_summary(run):
        return None
    summary = storage.read_json(storage.join(run, layout.FILTER_SUMMARY))
    if not isinstance(summary, dict):
        raise _fail("(the file)", "must hold a JSON object")
    if not isinstance(summary.get("sources", {}), dict):
        raise _fail("sources", "must map source names to their counts")
    if not isinstance(summary.get("measures", {}), dict):
        raise _fail("measures", "must map '<filter>.<rule>' to a histogram")
    filters = summary.get("filters", {})
    if not isinstance(filters, dict) or not all(isinstance(v, list) for v in filters.values()):
        raise _fail("filters", "must map each source to its list of config entries")
    sources = {name: _source(name, row) for name, row in summary.get("sources", {}).items()}
    measures = {rule: _measure(rule, entry) for rule, entry in summary.get("measures", {}).items()}
    wanted = {(reason, name): n for name, row in sources.items() for reason, n in row["dropped"].items()}
    rules = list(dict.fromkeys([*measures, *sorted({reason for reason, _ in wanted})]))
    return {
        "filters": filters,
        "rules": rules,
        "sources": sources,
        "measures": measures,
        "examples": _examples(run, wanted, per_source),
    }
