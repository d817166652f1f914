"""report.json's ``filter`` section, from ``filter/summary.json`` and ``filter/dropped`` (docs/report_schema.md).

The filter stage writes its per-source counts and, per rule, a histogram of every value the rule measured
(fixed bin edges, counts per source, with or without an underflow and an overflow bin); the report checks
their shape, spells the histograms out (``edges``, ``counts``, ``underflow``, ``overflow``) and adds a few
dropped documents per rule and source.
"""

from __future__ import annotations

import math
from typing import Any

from pipeline import storage
from pipeline.errors import PipelineError
from pipeline.stage_api import layout
from pipeline.stage_api.run_tables import excerpt, has_table, iter_rows

PER_SOURCE = 3  # dropped documents shown per rule and source
EXCERPT_CHARS = 300
DROPPED_COLUMNS = ["doc_id", "source", "reason", "detail", "value", "threshold", "excerpt"]


class FilterSummaryError(PipelineError):
    """``filter/summary.json`` does not have the shape the filter stage promises."""


def is_filter_reason(reason: str) -> bool:
    """True for a removal reason a filter gave: ``"<filter>.<rule>"`` (other stages' reasons have no dot)."""
    return "." in reason


def filtered_by_rule(removed: dict[str, int]) -> dict[str, int]:
    """The filter reasons of a source's removals (``{"gopher_quality.gopher_short_doc": 3, ...}``)."""
    return {reason: count for reason, count in removed.items() if is_filter_reason(reason)}


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
    for rows in iter_rows(run, layout.FILTER_DROPPED, DROPPED_COLUMNS):
        for row in rows:
            pair = (row["reason"], row["source"])
            if left.get(pair, 0) <= 0:
                continue
            left[pair] -= 1
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


def filter_section(run: str, per_source: int = PER_SOURCE) -> dict[str, Any] | None:
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
