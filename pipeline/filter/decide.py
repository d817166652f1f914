"""A rule filter's decision from its measures alone (docs/stages.md, Signals): each rule compares one measure with
its threshold, in order, and the first failing one drops the document. The filters decide this way in a normal
run (measure every document, then decide) and when a run is re-decided from ``filter/signals/``, so both give the
same keep mask, reasons, details and per-rule values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.filter.outcome import Outcomes, fmt
from pipeline.stage_api.filter import FilterResult

Signals = Mapping[str, np.ndarray]  # measure -> one value per document (float64, NaN: undefined for it)


@dataclass(frozen=True)
class Rule:
    """One threshold on one measure: ``min`` drops a value below ``limit``, ``max`` one above it (NaN fails
    neither); ``limit`` None switches the rule off. ``detail`` words a drop, with ``{value}`` and ``{limit}``."""

    rule: str
    measure: str
    direction: str
    limit: float | None
    detail: str
    zero_passes: bool = False  # a value of exactly 0 never fails (FineWeb's ``line_punct_exclude_zero``)


def decide(name: str, rules: Sequence[Rule], signals: Signals, n: int) -> Outcomes:
    """The keep mask, first failing rule with its detail, and the value of every rule evaluated (NaN where the
    document failed an earlier one or the rule is off) of ``n`` documents."""
    out = Outcomes(name, list(dict.fromkeys(r.rule for r in rules)), n)
    alive = np.ones(n, dtype=bool)
    for rule in rules:
        if rule.limit is None:
            continue
        values = np.asarray(signals[rule.measure], dtype=np.float64)
        out.measures[rule.rule][alive] = values[alive]
        with np.errstate(invalid="ignore"):
            fails = values < rule.limit if rule.direction == "min" else values > rule.limit
        if rule.zero_passes:
            fails &= values != 0
        fails &= alive
        for i in np.flatnonzero(fails).tolist():
            out.drop(i, rule.rule, rule.detail.format(value=fmt(values[i]), limit=fmt(rule.limit)))
        alive &= ~fails
    return out


def as_columns(signals: Mapping[str, Any], types: Mapping[str, pa.DataType]) -> dict[str, pa.Array]:
    """The typed signal columns of ``signals`` (NaN stays NaN: a null means the filter did not see the document)."""
    return {key: pa.array(signals[key], types[key], from_pandas=False) for key in types}


def numeric(columns: Mapping[str, pa.Array]) -> dict[str, np.ndarray]:
    """Signal columns as float64 arrays (a null as NaN), as :func:`decide` reads them."""
    found: dict[str, np.ndarray] = {}
    for key, column in columns.items():
        if pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_boolean(column.type):
            found[key] = np.asarray(column.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
    return found


def with_text(
    decided: FilterResult, original: pa.Array, rewritten: pa.Array, signals: Mapping[str, pa.Array]
) -> FilterResult:
    """``decided`` with the rewritten text of the documents it keeps (the others keep theirs) and the signals."""
    keep = np.asarray(decided.keep, dtype=bool)
    mask = pa.array(keep)
    text = pc.if_else(mask, rewritten, original) if not keep.all() else rewritten
    changed = int(np.count_nonzero(keep & ~_equal(rewritten, original)))
    return FilterResult(
        decided.keep, decided.reason, decided.detail, text, changed, decided.fields, decided.measures,
        decided.columns, signals,
    )  # fmt: skip


def _equal(a: pa.Array, b: pa.Array) -> np.ndarray:
    same = pc.equal(a.cast(pa.large_string()), b.cast(pa.large_string()))
    return np.asarray(same.fill_null(True).to_numpy(zero_copy_only=False), dtype=bool)
