"""One rule filter's decisions over a batch: built document by document (the first failing rule with its detail,
and the value every evaluated rule measured; docs/stages.md, Filters), or from its measures alone (:func:`decide`:
each rule compares one measure with its threshold, in order; docs/stages.md, Signals), as a normal run and a
re-decision from ``filter/signals/`` both decide."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.stage_api.filter import FilterResult, _blank


class Outcomes:
    """Keep mask, reasons, details and per-rule measures of ``n`` documents for the filter ``name``.

    Reasons and measure keys are ``"<name>.<rule>"``; a rule's measure is NaN where it was not evaluated (the
    document failed an earlier rule, or the rule is switched off)."""

    def __init__(self, name: str, rules: Sequence[str], n: int) -> None:
        self.name = name
        self.keep = np.ones(n, dtype=bool)
        self.reason: list[str | None] = [None] * n
        self.detail: list[str | None] = [None] * n
        self.measures = {rule: np.full(n, np.nan, dtype=np.float64) for rule in rules}
        self.unknown = np.zeros(n, dtype=bool)  # the decision reached a measure never taken (:func:`decide`)

    def measure(self, i: int, rule: str, value: float) -> None:
        """Record what ``rule`` measured on document ``i``."""
        self.measures[rule][i] = value

    def drop(self, i: int, rule: str, detail: str) -> None:
        """Document ``i`` fails ``rule``: what was measured against which threshold."""
        self.keep[i] = False
        self.reason[i] = f"{self.name}.{rule}"
        self.detail[i] = detail

    def result(self, text: pa.Array | None = None, changed: int = 0) -> FilterResult:
        """The :class:`FilterResult` of the batch."""
        measures = {f"{self.name}.{rule}": values for rule, values in self.measures.items()}
        columns = {UNKNOWN: pa.array(self.unknown)} if self.unknown.any() else {}
        return FilterResult(
            self.keep, self.reason, self.detail, text=text, changed=changed, measures=measures, columns=columns
        )


def judge_each(
    name: str, rules: Sequence[str], batch: pa.RecordBatch, judge: Callable[[Outcomes, int, str], None]
) -> FilterResult:
    """The result of a filter that decides each document alone: ``judge(out, i, text)`` for every row of ``batch``."""
    texts = texts_of(batch)
    out = Outcomes(name, rules, len(texts))
    for i, text in enumerate(texts):
        judge(out, i, text)
    return out.result()


def texts_of(batch: pa.RecordBatch) -> list[str]:
    """The ``text`` column of ``batch`` as Python strings (a null text is the empty string)."""
    column = batch.column("text")
    return (column.fill_null("") if column.null_count else column).to_pylist()


def text_bytes(batch: pa.RecordBatch) -> tuple[np.ndarray, np.ndarray]:
    """The ``text`` column of ``batch`` as UTF-8 bytes (uint8) and the offsets of each text in them (int64, one
    more than the rows; a null text is empty)."""
    column = batch.column("text")
    if column.null_count:
        column = column.fill_null("")
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = column.cast(pa.large_string())
    _, offsets, data = column.buffers()
    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    bounds = np.frombuffer(offsets, dtype=width)[column.offset : column.offset + len(column) + 1].astype(np.int64)
    return (np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)), bounds


def fmt(value: float) -> str:
    """A measured value or threshold for a detail: integers as such, fractions with four significant digits."""
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


UNKNOWN = "__unknown"  # a result column: documents whose decision reached a measure not taken
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


def decide(
    name: str, rules: Sequence[Rule], signals: Signals, n: int, unknown: Mapping[str, np.ndarray] | None = None
) -> Outcomes:
    """The keep mask, first failing rule with its detail, and the value of every rule evaluated (NaN where the
    document failed an earlier one or the rule is off) of ``n`` documents. ``unknown``: per measure, where it was
    not taken (a measure after a failing rule, left out); a document reaching one is marked ``unknown`` (its
    decision needs its text) and goes no further."""
    out = Outcomes(name, list(dict.fromkeys(r.rule for r in rules)), n)
    alive = np.ones(n, dtype=bool)
    for rule in rules:
        if rule.limit is None:
            continue
        if unknown is not None and rule.measure in unknown:
            reached = alive & unknown[rule.measure]
            out.unknown |= reached
            out.keep &= ~reached  # not kept either: undecided
            alive &= ~reached
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


def nulls(columns: Mapping[str, pa.Array]) -> dict[str, np.ndarray]:
    """Where each signal column is null (a measure not taken)."""
    return {k: np.asarray(c.is_null().to_numpy(zero_copy_only=False), dtype=bool) for k, c in columns.items()}


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


def rewritten(original: pa.Array, text: pa.Array) -> pa.Array:
    """Per document: 0 when ``text`` is ``original``, 2 when it is blank and ``original`` is not (the filter's
    ``empty`` drop when it keeps the document), else 1 (int8)."""
    changed = ~_equal(text, original)
    blank = changed & _blank(text) & ~_blank(original)
    return pa.array(changed.astype(np.int8) + blank.astype(np.int8), pa.int8())


def _equal(a: pa.Array, b: pa.Array) -> np.ndarray:
    same = pc.equal(a.cast(pa.large_string()), b.cast(pa.large_string()))
    return np.asarray(same.fill_null(True).to_numpy(zero_copy_only=False), dtype=bool)
