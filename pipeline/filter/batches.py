"""The filter stage's batch step (docs/stages.md, The filter stage): Arrow batches of documents in; out, in one
schema told apart by ``kind``, the kept documents (with ``language`` and ``language_score``), one row per dropped
document (reason, detail, value, threshold, excerpt), and at the end one ``summary`` row with the partition's
counts and histograms (:class:`Summary`, merged on the driver). No Spark here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.filter.plan import Plan, Step
from pipeline.filter.thresholds import histogram
from pipeline.stage_api.filter import EMPTIED, FilterResult, apply_filters, drop_emptied

EXCERPT = 300  # characters of the text a dropping filter saw
ROW = "__row"  # a batch's row numbers while the filters run: where each filter's signals go
LANGUAGE = pa.schema([("language", pa.string()), ("language_score", pa.float64())])
DROP_FIELDS = pa.schema([("value", pa.float64()), ("threshold", pa.float64()), ("excerpt", pa.string())])
DROPPED_COLUMNS = ("doc_id", "source", "reason", "detail", *DROP_FIELDS.names)
# filter/signals/'s column of the first EXCERPT characters of a document's text as the stage read it, where its
# filter/dropped/ excerpt is not that: kept documents, and drops by a filter after a text-rewriting one
ORIGINAL_EXCERPT = "excerpt"


@dataclass
class Summary:
    """Counts per source and histogram counts per rule and source; partials of tasks merge into the stage's."""

    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # rule -> source -> bin counts

    def source(self, name: str) -> dict[str, Any]:
        """The counters of one source (created empty)."""
        return self.sources.setdefault(name, {"read": 0, "kept": 0, "dropped": {}, "changed": {}, "languages": {}})

    def add_histogram(self, rule: str, source: str, counts: np.ndarray) -> None:
        """Add one batch's bin counts of ``rule``."""
        have = self.counts.setdefault(rule, {}).get(source)
        self.counts[rule][source] = counts.tolist() if have is None else (np.asarray(have) + counts).tolist()

    def merge(self, other: Mapping[str, Any]) -> None:
        """Add a partial (:meth:`to_json`'s form)."""
        for name, row in other["sources"].items():
            mine = self.source(name)
            mine["read"] += row["read"]
            mine["kept"] += row["kept"]
            for part in ("dropped", "changed", "languages"):
                for key, n in row[part].items():
                    mine[part][key] = mine[part].get(key, 0) + n
        for rule, per_source in other["counts"].items():
            for name, counts in per_source.items():
                self.add_histogram(rule, name, np.asarray(counts, np.int64))

    def add_outcome(self, source: str, done: Any) -> None:
        """Count one batch's outcome for ``source`` (:func:`apply_filters`' result): kept, changed, drop reasons."""
        counters = self.source(source)
        counters["kept"] += done.kept.num_rows
        for name, n in done.changed.items():
            counters["changed"][name] = counters["changed"].get(name, 0) + n
        for reason in done.dropped.column("reason").to_pylist():
            counters["dropped"][reason] = counters["dropped"].get(reason, 0) + 1

    def to_json(self) -> dict[str, Any]:
        return {"sources": self.sources, "counts": self.counts}


def qualified(name: str, reason: str) -> str:
    """``"<filter>.<rule>"``: a reason or measure as the filter stage counts it."""
    return reason if reason.startswith(f"{name}.") else f"{name}.{reason}"


class Recorder:
    """A filter of one source, as :func:`apply_filters` runs it: reasons qualified by the filter's name, each drop's
    value, threshold and excerpt as fields, and the histograms and languages of what it saw added to a summary."""

    def __init__(self, step: Step, source: str, plan: Plan, summary: Summary, inner: Any = None) -> None:
        self.inner = step.build() if inner is None else inner  # another: deciding from signals (filter/redecide.py)
        self.name: str = self.inner.name
        self.step, self.source, self.plan, self.summary = step, source, plan, summary
        self.seen: list[tuple[pa.Array, dict[str, pa.Array]]] = []  # (rows, signals) of the batch being filtered

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """The inner filter's result, completed with what the stage records."""
        result = drop_emptied(self.name, batch, self.inner.apply(batch))  # here: the drop's fields are filled in
        emptied = qualified(self.name, EMPTIED)
        measures = {qualified(self.name, k): np.asarray(v, np.float64) for k, v in result.measures.items()}
        if ROW in batch.schema.names and inner_measures(self.inner):
            self.seen.append((batch.column(ROW), self._signals(result, measures)))
        if self.step.annotate:  # measured and recorded, nothing dropped or rewritten
            n = batch.num_rows
            result = FilterResult(np.ones(n, dtype=bool), [None] * n, [None] * n, columns=result.columns)
        for rule, values in measures.items():
            self.summary.add_histogram(rule, self.source, histogram(values, self.plan.edges(rule)))
        if "language" in result.columns:
            languages = self.summary.source(self.source)["languages"]
            for item in pc.value_counts(result.columns["language"]).to_pylist():
                if item["values"] is not None:
                    languages[item["values"]] = languages.get(item["values"], 0) + item["counts"]
        n = batch.num_rows
        reasons = [None if r is None else qualified(self.name, r) for r in result.reason]
        value, threshold = np.full(n, np.nan), np.full(n, np.nan)
        excerpt: list[str | None] = [None] * n
        texts = batch.column("text") if "text" in batch.schema.names else pa.nulls(n, pa.string())
        only = next(iter(measures.values())) if len(measures) == 1 else None
        for i in np.flatnonzero(~np.asarray(result.keep, dtype=bool)):
            reason = reasons[i] or f"{self.name}.dropped"  # a filter that gives no reason
            reasons[i] = reason
            measured = measures.get(reason, None if reason == emptied else only)
            value[i] = measured[i] if measured is not None else np.nan
            threshold[i] = self.step.thresholds.get(reason, (np.nan, ""))[0]
            excerpt[i] = (texts[i].as_py() or "")[:EXCERPT] if texts[i].is_valid else None
        fields = {
            "value": pa.array(value, pa.float64(), from_pandas=True),
            "threshold": pa.array(threshold, pa.float64(), from_pandas=True),
            "excerpt": pa.array(excerpt, pa.string()),
        }
        return FilterResult(
            result.keep, reasons, result.detail, result.text, result.changed, fields, measures, result.columns
        )

    def _signals(self, result: FilterResult, measures: Mapping[str, np.ndarray]) -> dict[str, pa.Array]:
        """The step's signal columns of the batch: the filter's own, else its rules' measures (NaN kept)."""
        given = {qualified(self.name, k): v for k, v in result.signals.items()}
        found = {}
        for column, kind in self.step.signals.items():
            if column in given:
                found[column] = given[column].cast(kind)
            elif column in measures:
                values = measures[column]
                if pa.types.is_integer(kind):  # a count: NaN where the rule did not run is a null
                    found[column] = pa.array(values, pa.float64(), from_pandas=True).cast(kind)
                else:
                    found[column] = pa.array(values, kind)
        return found


def inner_measures(inner: Any) -> bool:
    """Whether a recorder's filter measures text (its signals are new), not decides from signals already taken."""
    return not getattr(inner, "from_signals", False)


def output_schema(documents: pa.Schema, signals: pa.Schema | None = None, columns: Sequence[str] = ()) -> pa.Schema:
    """The step's rows: ``kind``, the documents' columns, ``language``, ``language_score``, the float64 ``columns``
    filters set, the dropped rows' columns, ``summary`` (JSON), and the ``signals`` rows' columns
    (``"<filter>.<measure>"``: none, no signals rows)."""
    names = set(documents.names)
    scores = [pa.field(c, pa.float64()) for c in columns]
    extra = [*LANGUAGE, *scores, pa.field("reason", pa.string()), pa.field("detail", pa.string()), *DROP_FIELDS]
    added = [f for f in extra if f.name not in names]
    measured = [f for f in signals or [] if f.name not in names]
    return pa.schema([pa.field("kind", pa.string()), *documents, *added, pa.field("summary", pa.string()), *measured])


def filter_partition(
    batches: Iterable[pa.RecordBatch], plan: Plan, schema: pa.Schema, signals_only: bool = False
) -> Iterator[pa.RecordBatch]:
    """Every batch's kept, dropped and signals rows (``schema``: :func:`output_schema`), then the partition's summary
    row; ``signals_only``: the signals rows alone (a filter measured alone, filter/redecide.py)."""
    summary = Summary()
    filters: dict[str, list[Recorder]] = {}
    for batch in batches:
        sources = batch.column("source")
        names = sorted(set(pc.unique(sources).to_pylist()))
        for name in names:
            whole = len(names) == 1 and sources.null_count == 0  # one source: the batch itself, no copy
            part = batch if whole else batch.filter(pc.equal(sources, name))
            if name not in filters:
                filters[name] = [Recorder(s, name, plan, summary) for s in plan.steps.get(name, [])]
            yield from _filtered(part, name, filters[name], summary, schema, signals_only)
    row = {f.name: pa.nulls(1, f.type) for f in schema}
    row["kind"] = pa.array(["summary"], pa.string())
    row["summary"] = pa.array([json.dumps(summary.to_json(), sort_keys=True)], pa.string())
    yield pa.RecordBatch.from_arrays([row[f.name] for f in schema], schema=schema)


def _filtered(
    batch: pa.RecordBatch,
    source: str,
    filters: Sequence[Recorder],
    summary: Summary,
    schema: pa.Schema,
    signals_only: bool = False,
) -> Iterator[pa.RecordBatch]:
    summary.source(source)["read"] += batch.num_rows
    from pipeline.text.english.words import shared_splits  # here: the driver, which plans the stage, never splits words

    signals = [f for step in filters for f in step.step.signals if f in schema.names]
    if signals:
        batch = batch.append_column(ROW, pa.array(np.arange(batch.num_rows, dtype=np.int64)))
    with shared_splits():  # the filters of one batch split each text into words once
        done = apply_filters(batch, filters, DROP_FIELDS)
    if signals:
        yield _signal_rows(batch, filters, schema, None if signals_only else _originals(batch, filters, done))
    if signals_only:
        return
    summary.add_outcome(source, done)
    if done.kept.num_rows:
        yield _rows("kept", done.kept, schema)
    if done.dropped.num_rows:
        yield _rows("dropped", done.dropped, schema)


def _originals(batch: pa.RecordBatch, filters: Sequence[Recorder], done: Any) -> pa.Array:
    """Per document of ``batch``: the start of its text (:data:`ORIGINAL_EXCERPT`) when it is kept or a filter after
    a text-rewriting one dropped it, else null."""
    first = next((i for i, f in enumerate(filters) if _rewrites(f.step)), len(filters))
    late = {f.name for f in filters[first + 1 :]}
    wanted = set(done.kept.column("doc_id").to_pylist())
    reasons = done.dropped.column("reason").to_pylist()
    for doc, reason in zip(done.dropped.column("doc_id").to_pylist(), reasons, strict=True):
        if reason.split(".", 1)[0] in late:
            wanted.add(doc)
    ids = batch.column("doc_id")
    chosen = pc.is_in(ids, pa.array(sorted(wanted), ids.type))  # every document of an annotate-only run: no copies
    starts = pc.utf8_slice_codeunits(batch.column("text"), 0, EXCERPT)  # code points, as str slicing counts
    return pc.if_else(chosen, starts, pa.nulls(batch.num_rows, pa.string())).cast(pa.string())


def _rewrites(step: Step) -> bool:
    """Whether ``step`` rewrites the text the later steps see (as filter/redecide.py's ``rewrites``)."""
    return f"{step.entry['name']}.rewritten" in step.signals and not step.annotate


def _signal_rows(
    batch: pa.RecordBatch, filters: Sequence[Recorder], schema: pa.Schema, originals: pa.Array | None = None
) -> pa.RecordBatch:
    """One ``signals`` row per document of ``batch``: each filter's signals where it saw the document, else null;
    ``originals``: its :data:`ORIGINAL_EXCERPT` column."""
    n = batch.num_rows
    columns: dict[str, pa.Array] = {"doc_id": batch.column("doc_id"), "source": batch.column("source")}
    if originals is not None:
        columns[ORIGINAL_EXCERPT] = originals
    for step in filters:
        for rows, found in step.seen:
            at = np.full(n, -1, dtype=np.int64)
            at[rows.to_numpy()] = np.arange(len(rows))
            index = pa.array(at, pa.int64(), mask=at < 0)
            columns.update({name: column.take(index) for name, column in found.items()})
        step.seen.clear()
    return _rows("signals", pa.RecordBatch.from_pydict(columns), schema)


def _rows(kind: str, batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` in the step's schema (absent columns null)."""
    n = batch.num_rows
    columns = []
    for f in schema:
        if f.name == "kind":
            columns.append(pa.array([kind] * n, pa.string()))
        elif f.name in batch.schema.names:
            columns.append(batch.column(f.name).cast(f.type))
        else:
            columns.append(pa.nulls(n, f.type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)
