"""One rule filter's decisions over a batch, built document by document: the first failing rule with its detail,
and the value every evaluated rule measured (docs/stages.md, Filters)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa

from pipeline.stage_api.filter import FilterResult


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
        return FilterResult(self.keep, self.reason, self.detail, text=text, changed=changed, measures=measures)


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
