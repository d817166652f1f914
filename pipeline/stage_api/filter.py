"""The Filter contract: an Arrow batch of documents in, a keep mask with a reason and detail for each dropped
document out, and optionally rewritten text (docs/stages.md, Filters).

A filter is pure Python/numpy over one batch (no Spark), so it runs the same in a test, a benchmark and a
Spark task. Filters compose in order with :func:`apply_filters`: each sees only the documents the earlier
ones kept (and their rewritten text); a dropped document carries the reason of the first filter that
dropped it. Decontamination is a filter (``pipeline.decontaminate.filter``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

EMPTIED = "empty"  # the rule of a document a filter rewrote to empty or whitespace-only text: "<filter>.empty"
EMPTIED_DETAIL = "text empty after the filter rewrote it"

DROPPED_SCHEMA = pa.schema(
    [("doc_id", pa.int64()), ("source", pa.string()), ("reason", pa.string()), ("detail", pa.string())]
)


@dataclass(frozen=True)
class FilterResult:
    """One filter's decision on a batch of ``n`` documents."""

    keep: np.ndarray  # bool, shape (n,)
    reason: Sequence[str | None]  # per document: why it was dropped (the filter's name or one of its rules)
    detail: Sequence[str | None]  # per document: what was measured against which threshold; None where kept
    text: pa.Array | None = None  # the rewritten text of every document (None: unchanged)
    changed: int = 0  # documents whose text the filter rewrote
    fields: Mapping[str, pa.Array] = field(default_factory=dict)  # further per-document columns of a drop
    # per rule, the value it measured for each document (float64, NaN where the rule did not run): the report's
    # distributions and a drop's evidence
    measures: Mapping[str, np.ndarray] = field(default_factory=dict)
    columns: Mapping[str, pa.Array] = field(default_factory=dict)  # columns set on every document (language, ...)
    # per measure, its typed value for every document of the batch (docs/stages.md, Signals; null where a costly
    # measure was left untaken after a dropping rule): what re-deciding from ``filter/signals/`` reads; empty: the
    # stage takes ``measures`` instead
    signals: Mapping[str, pa.Array] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.keep)
        if len(self.reason) != n or len(self.detail) != n or (self.text is not None and len(self.text) != n):
            raise ValueError(f"a FilterResult needs one keep, reason, detail (and text) per document ({n})")


class Filter(Protocol):
    """One step that decides, per document of a batch, whether it stays."""

    name: str  # the removal reason its drops are counted under

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Decide for every row of ``batch`` (columns ``doc_id``, ``source``, ``text`` at least)."""
        ...


@dataclass
class FilteredBatch:
    """What :func:`apply_filters` made of a batch."""

    kept: pa.RecordBatch  # the documents every filter kept, with their final text
    dropped: pa.RecordBatch  # doc_id, source, reason, detail (and the dropping filters' fields)
    changed: dict[str, int]  # filter name -> documents whose text it rewrote


def apply_filters(batch: pa.RecordBatch, filters: Sequence[Filter], fields: pa.Schema | None = None) -> FilteredBatch:
    """Run ``filters`` in order over ``batch``; ``fields`` are the extra columns of the dropped rows (null where a
    filter does not report them)."""
    schema = _dropped_schema(fields)
    dropped: list[pa.RecordBatch] = []
    changed: dict[str, int] = {}
    for step in filters:
        if batch.num_rows == 0:
            break
        result = drop_emptied(step.name, batch, step.apply(batch))
        changed[step.name] = changed.get(step.name, 0) + result.changed
        if result.text is not None:
            batch = batch.set_column(batch.schema.get_field_index("text"), "text", result.text)
        for name, column in result.columns.items():
            at = batch.schema.get_field_index(name)
            batch = batch.set_column(at, name, column) if at >= 0 else batch.append_column(name, column)
        keep = np.asarray(result.keep, dtype=bool)
        if not keep.all():
            gone = np.flatnonzero(~keep)
            dropped.append(_dropped_rows(batch, result, gone, schema))
            batch = batch.filter(pa.array(keep))
    rows = pa.Table.from_batches(dropped, schema).combine_chunks().to_batches() if dropped else []
    return FilteredBatch(batch, rows[0] if rows else pa.RecordBatch.from_pylist([], schema=schema), changed)


def drop_emptied(name: str, batch: pa.RecordBatch, result: FilterResult) -> FilterResult:
    """``result`` with every document it keeps but rewrote to empty or whitespace-only text (from text that was not)
    dropped as ``"<name>.empty"`` (docs/stages.md, The filter stage); ``result`` itself when there is none."""
    if result.text is None:
        return result
    emptied = _blank(result.text) & ~_blank(batch.column("text")) & np.asarray(result.keep, dtype=bool)
    if not emptied.any():
        return result
    reason, detail = list(result.reason), list(result.detail)
    for i in np.flatnonzero(emptied).tolist():
        reason[i], detail[i] = f"{name}.{EMPTIED}", EMPTIED_DETAIL
    keep = np.asarray(result.keep, dtype=bool) & ~emptied
    return replace(result, keep=keep, reason=reason, detail=detail)


def _blank(texts: pa.Array) -> np.ndarray:
    """Per text: empty or only whitespace (Unicode's, as Arrow's ``utf8_is_space`` reads it); null is not blank."""
    blank = pc.or_kleene(pc.equal(pc.binary_length(texts), 0), pc.utf8_is_space(texts))
    return np.asarray(blank.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)


def _dropped_schema(fields: pa.Schema | None) -> pa.Schema:
    schema = DROPPED_SCHEMA
    for extra in fields or []:
        schema = schema.append(extra)
    return schema


def _dropped_rows(batch: pa.RecordBatch, result: FilterResult, rows: np.ndarray, schema: pa.Schema) -> pa.RecordBatch:
    take = pa.array(rows, pa.int64())
    columns = {
        "doc_id": batch.column("doc_id").take(take),
        "source": batch.column("source").take(take),
        "reason": pa.array([result.reason[i] for i in rows], pa.string()),
        "detail": pa.array([result.detail[i] for i in rows], pa.string()),
    }
    for extra in schema:
        if extra.name in columns:
            continue
        given = result.fields.get(extra.name)
        columns[extra.name] = (
            given.take(take).cast(extra.type) if given is not None else pa.nulls(len(rows), extra.type)
        )
    return pa.RecordBatch.from_arrays([columns[f.name] for f in schema], schema=schema)


def dropped_batches(
    batches: Iterable[pa.RecordBatch], filters: Sequence[Filter], fields: pa.Schema | None = None
) -> Iterator[pa.RecordBatch]:
    """The dropped rows of every batch (:func:`apply_filters`), for a Spark step that lists what filters removed."""
    for batch in batches:
        yield apply_filters(batch, filters, fields).dropped


def dropped_ddl(fields: pa.Schema | None = None) -> str:
    """The Spark DDL of :func:`dropped_batches`' rows."""
    types = {pa.int64(): "long", pa.string(): "string", pa.float64(): "double", pa.int32(): "int"}
    return ", ".join(f"{f.name} {types[f.type]}" for f in _dropped_schema(fields))
