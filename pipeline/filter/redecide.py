"""Re-deciding a finished filter stage from ``filter/signals/`` (docs/stages.md, Re-deciding from the signals): what
each step measured (its measure options, and the text-rewriting steps before it), whether a new plan may reuse the
signals, and the batch step that decides from the signal columns alone. No Spark here.

A document is decided from its columns, filter by filter in the new order, as the filters decide in a normal run
(``pipeline.filter.outcome.decide``); it is computed again from its text (``recompute``) when a filter it now
reaches never saw it, when it is kept now but was not before (its rewritten text is not kept anywhere), or when a
filter preceded by a text-rewriting one drops it now and did not before (a drop's excerpt is the text that filter
saw)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import storage
from pipeline.filter import registry
from pipeline.filter.batches import ROW, Recorder, Summary, _rows, qualified
from pipeline.filter.entries import _sha256 as file_sha256
from pipeline.filter.outcome import UNKNOWN
from pipeline.filter.plan import Plan, Step
from pipeline.filter.rules.language import NAME as LANGUAGE_FILTER
from pipeline.stage_api.filter import EMPTIED, EMPTIED_DETAIL, FilterResult, apply_filters

REWRITTEN = "rewritten"  # a rewriting filter's signal: 0 text unchanged, 1 rewritten, 2 rewritten to blank
OLD_REASON = "__old_reason"  # the reason the previous decision dropped a document for (null: kept)
OLD_EXCERPT = "__old_excerpt"  # that drop's excerpt
ORIGINAL = "__original"  # filter/signals/' start of the text as the stage read it (batches.ORIGINAL_EXCERPT)
EXCERPT_FROM = ("old", "text")  # where a drop's excerpt comes from: the previous drop's, or the document's text


def measure_key(step: Step) -> dict[str, Any] | None:
    """What ``step``'s measures depend on: its options less the thresholds and rule switches its registered filter
    declares (``DECIDES``), files by content; None for a filter that cannot decide from its signals."""
    cls = registry.filter_class(step.entry["name"])
    if cls.DECIDES is None:
        return None
    values = {k: v for k, v in step.entry.items() if k not in cls.DECIDES and k != "annotate"}
    for option, path in step.options.files().items():
        values[option] = file_sha256(path)
    return json.loads(json.dumps(values, sort_keys=True, default=str))


def rewrites(step: Step) -> bool:
    """Whether ``step`` rewrites the text the later steps see (a rewriting filter, not annotating)."""
    return f"{step.entry['name']}.{REWRITTEN}" in step.signals and not step.annotate


def signals_meta(plan: Plan, documents: str) -> dict[str, Any]:
    """``filter/signals.json``: the input table's identity and, per source, each step's name, measure key and the
    rewriting steps before it (what its signals were measured on), and the rewriting steps in order."""
    sources: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for source, steps in plan.steps.items():
        before: list[dict[str, Any]] = []
        listed = []
        for step in steps:
            key = measure_key(step)
            listed.append({"name": step.entry["name"], "measure": key, "after": list(before)})
            if rewrites(step):
                before.append({"name": step.entry["name"], "measure": key})
        sources[source] = {"steps": listed, "rewriters": before}
    return {"input": table_identity(documents), "sources": sources}


def reuse_problem(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> str | None:
    """Why ``current`` (:func:`signals_meta` of the new plan) cannot be decided from the signals ``previous``
    recorded; None when it can (its new filters and those measuring differently measured alone: :func:`anew`)."""
    if previous is None:
        return "no signals of an earlier decision"
    if previous.get("input") != current["input"]:
        return "the documents changed since the signals were measured"
    for source, now in current["sources"].items():
        before = previous.get("sources", {}).get(source)
        if before is None or (now["steps"] and not before["steps"]):
            return f"source {source}: no filter measured its documents before"
        if now["rewriters"] != before["rewriters"]:
            return f"source {source}: the text-rewriting filters changed (their kept text is not in the signals)"
        for step in now["steps"]:
            if step["measure"] is None:
                return f"source {source}: filter {step['name']!r} cannot decide from its signals"
    return None


def anew(previous: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, str]:
    """The filters of ``current`` whose signals ``previous`` lacks, for a source listing them: filter -> why (new,
    or measuring differently: other measure options or other rewriting filters before it). Each is measured alone
    over the documents (after the rewriting filters before it), the others re-decided from their columns."""
    found: dict[str, str] = {}
    for source, now in current["sources"].items():
        old = {s["name"]: s for s in previous.get("sources", {}).get(source, {}).get("steps", [])}
        for step in now["steps"]:
            was = old.get(step["name"])
            if was is None:
                found.setdefault(step["name"], f"new for source {source}")
            elif was["measure"] != step["measure"] or was["after"] != step["after"]:
                found.setdefault(step["name"], f"measures differently for source {source}")
    return found


def relabels(previous: Mapping[str, Any], current: Mapping[str, Any], alone: Mapping[str, str]) -> bool:
    """Whether the kept documents' ``language`` columns may differ from the earlier kept rows': the language filter
    (which sets them) is measured alone, or is in one list of a source and not the other."""
    if LANGUAGE_FILTER in alone:
        return True
    for source, now in current["sources"].items():
        before = previous.get("sources", {}).get(source, {}).get("steps", [])
        if (LANGUAGE_FILTER in {s["name"] for s in now["steps"]}) != (LANGUAGE_FILTER in {s["name"] for s in before}):
            return True
    return False


def measuring_plan(plan: Plan, names: Iterable[str]) -> Plan:
    """The steps that measure the filters ``names`` alone: per source, each of them annotating (every measure, no
    drop), after the text-rewriting filters before it (their text, their drops; no signals of theirs)."""
    wanted = set(names)
    steps: dict[str, list[Step]] = {}
    for source, listed in plan.steps.items():
        last = max((i for i, s in enumerate(listed) if s.entry["name"] in wanted), default=-1)
        chosen = []
        for step in listed[: last + 1]:
            if step.entry["name"] in wanted:
                chosen.append(dataclasses.replace(step, options=dataclasses.replace(step.options, annotate=True)))
            elif rewrites(step):
                chosen.append(dataclasses.replace(step, signals={}))
        steps[source] = chosen
    columns = [f for f in plan.signals if f.name.split(".", 1)[0] in wanted]
    return dataclasses.replace(plan, steps=steps, columns=(), ranking=None, signals=pa.schema(columns))


def table_identity(path: str) -> str:
    """A digest of a table's files (relative names and sizes): a rewritten table has other part names."""
    fs, inner = storage.resolve(path)
    if not fs.exists(inner):
        return ""
    found = fs.find(inner, detail=True)
    items = sorted(
        (name[len(inner) :].lstrip("/"), int(info.get("size") or 0))
        for name, info in found.items()
        if not name.rsplit("/", 1)[-1].startswith((".", "_"))
    )
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()


class FromSignals:
    """A filter deciding from the signal columns of a batch (no text): ``decide`` of the step's filter, the
    documents it never saw marked for recompute, a rewriting filter's text changes and blank rewrites counted."""

    from_signals = True

    def __init__(self, step: Step, recompute: np.ndarray) -> None:
        self.inner = step.build()
        self.name: str = self.inner.name
        self.step, self.recompute = step, recompute

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        n = batch.num_rows
        prefix = f"{self.name}."
        columns = {c[len(prefix) :]: batch.column(c) for c in self.step.signals if c in batch.schema.names}
        first = next(iter(columns.values()), None)  # a filter that saw a document takes its first measure
        unseen = np.zeros(n, dtype=bool) if first is None else np.asarray(first.is_null().to_numpy(False), bool)
        result: FilterResult = self.inner.decide(columns, n)
        if UNKNOWN in result.columns:  # it reached a measure the filter did not take (after a failing rule)
            unseen |= np.asarray(result.columns[UNKNOWN].to_numpy(zero_copy_only=False), dtype=bool)
        rows = batch.column(ROW).to_numpy()
        self.recompute[rows[unseen]] = True
        keep = np.asarray(result.keep, dtype=bool) & ~unseen
        reason, detail = list(result.reason), list(result.detail)
        changed = 0
        if REWRITTEN in columns:
            code = np.asarray(columns[REWRITTEN].fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
            changed = int(np.count_nonzero(keep & (code >= 1)))
            for i in np.flatnonzero(keep & (code == 2)).tolist():
                reason[i], detail[i] = f"{self.name}.{EMPTIED}", EMPTIED_DETAIL
                keep[i] = False
        measures = {k: np.where(unseen, np.nan, v) for k, v in result.measures.items()}
        columns = {k: v for k, v in result.columns.items() if k != UNKNOWN}
        return FilterResult(keep, reason, detail, None, changed, {}, measures, columns)


def redecide_schema(plan: Plan) -> pa.Schema:
    """The batch step's rows: ``kind`` (kept, dropped, recompute, summary), the decision's columns and where a
    drop's excerpt comes from."""
    return pa.schema(
        [
            ("kind", pa.string()),
            ("doc_id", pa.int64()),
            ("source", pa.string()),
            ("language", pa.string()),
            ("language_score", pa.float64()),
            ("reason", pa.string()),
            ("detail", pa.string()),
            ("value", pa.float64()),
            ("threshold", pa.float64()),
            ("excerpt_from", pa.string()),
            ("excerpt", pa.string()),
            ("summary", pa.string()),
        ]
    )


def redecide_partition(batches: Iterable[pa.RecordBatch], plan: Plan, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The new decision of every document of the signals ``batches`` (columns: doc_id, source, the signals,
    :data:`OLD_REASON`, :data:`OLD_EXCERPT`): kept and dropped rows (a drop by the filter that dropped it before with
    that drop's excerpt), the documents to compute again from their text, then the summary
    row of the documents decided here."""
    summary = Summary()
    for batch in batches:
        sources = batch.column("source")
        for name in sorted(set(pc.unique(sources).to_pylist())):
            part = batch.filter(pc.equal(sources, name))
            yield from _decided(part, name, plan, summary, schema)
    row = {f.name: pa.nulls(1, f.type) for f in schema}
    row["kind"] = pa.array(["summary"], pa.string())
    row["summary"] = pa.array([json.dumps(summary.to_json(), sort_keys=True)], pa.string())
    yield pa.RecordBatch.from_arrays([row[f.name] for f in schema], schema=schema)


def _decide_all(batch: pa.RecordBatch, source: str, plan: Plan, summary: Summary) -> tuple[Any, np.ndarray]:
    """The filters of ``source`` over ``batch`` from its signals; which rows need their text."""
    recompute = np.zeros(batch.num_rows, dtype=bool)
    steps = plan.steps.get(source, [])
    filters = []
    for step in steps:
        filters.append(Recorder(step, source, plan, summary, inner=FromSignals(step, recompute)))
    batch = batch.append_column(ROW, pa.array(np.arange(batch.num_rows, dtype=np.int64)))
    done = apply_filters(batch, filters, _FIELDS)
    return done, recompute


_FIELDS = pa.schema([("value", pa.float64()), ("threshold", pa.float64()), ("excerpt", pa.string())])


def _decided(
    batch: pa.RecordBatch, source: str, plan: Plan, summary: Summary, schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    old = batch.column(OLD_REASON).to_pylist()
    ids = batch.column("doc_id").to_numpy()
    steps = plan.steps.get(source, [])
    rewriting_at = [i for i, s in enumerate(steps) if rewrites(s)]
    position = {s.entry["name"]: i for i, s in enumerate(steps)}
    trial = Summary()
    done, recompute = _decide_all(batch, source, plan, trial)  # first: which documents need their text
    dropped = done.dropped.to_pylist()
    index = {doc: i for i, doc in enumerate(ids.tolist())}
    for row in dropped:
        i = index[row["doc_id"]]
        if recompute[i]:
            continue
        name = row["reason"].split(".", 1)[0]
        was = old[i]
        if was is not None and was.split(".", 1)[0] == name:
            continue  # the excerpt of the earlier drop, by the same filter on the same text
        if any(at < position[name] for at in rewriting_at):
            recompute[i] = True  # the text this filter saw was rewritten: only the filters can say what it was
    kept = set(done.kept.column("doc_id").to_pylist())
    for i, doc in enumerate(ids.tolist()):
        if doc in kept and old[i] is not None:
            recompute[i] = True  # kept now, dropped before: its rewritten text was never written
    decided = batch
    if recompute.any():
        yield _rows("recompute", batch.filter(pa.array(recompute)).select(["doc_id", "source"]), schema)
        decided = batch.filter(pa.array(~recompute))
        if not decided.num_rows:
            return
        done, _ = _decide_all(decided, source, plan, summary)
    else:  # the first pass decided them all: its counts are the decision's
        summary.merge(trial.to_json())
    summary.source(source)["read"] += decided.num_rows
    summary.add_outcome(source, done)
    if done.kept.num_rows:
        yield _rows("kept", done.kept, schema)
    if done.dropped.num_rows:
        ids_now = decided.column("doc_id").to_pylist()
        old_of = dict(zip(ids_now, decided.column(OLD_REASON).to_pylist(), strict=True))
        nothing = [None] * len(ids_now)
        names = decided.schema.names
        excerpt_of = dict(zip(ids_now, _column(decided, OLD_EXCERPT, nothing), strict=True))
        original_of = dict(zip(ids_now, _column(decided, ORIGINAL, nothing), strict=True))
        reasons = done.dropped.column("reason").to_pylist()
        source_of: list[str] = []
        excerpts: list[str | None] = []
        for d, r in zip(done.dropped.column("doc_id").to_pylist(), reasons, strict=True):
            if (old_of[d] or "").split(".", 1)[0] == r.split(".", 1)[0]:
                found = excerpt_of[d]  # the earlier drop's, by the same filter on the same text
            elif original_of[d] is not None:
                found = original_of[d]  # this filter saw the text as read (no rewriting filter before it)
            elif ORIGINAL in names and old_of[d] is not None:
                found = excerpt_of[d]  # dropped before by a filter before any rewriting one: the text as read
            else:  # signals of a run before filter/signals/ kept the start of the text: read it
                source_of.append(EXCERPT_FROM[1])
                excerpts.append(None)
                continue
            source_of.append(EXCERPT_FROM[0])
            excerpts.append(found)
        at = done.dropped.schema.get_field_index("excerpt")
        rows = done.dropped.set_column(at, "excerpt", pa.array(excerpts, pa.string()))
        rows = rows.append_column("excerpt_from", pa.array(source_of, pa.string()))
        yield _rows("dropped", rows, schema)


def _column(batch: pa.RecordBatch, name: str, default: list[Any]) -> list[Any]:
    """``batch``'s column ``name`` as a list (``default`` when it has none)."""
    return batch.column(name).to_pylist() if name in batch.schema.names else default


def qualified_rules(plan: Plan) -> list[str]:
    """Every ``"<filter>.<rule>"`` the plan's thresholds name (for the log)."""
    return sorted({qualified(s.entry["name"], r) for steps in plan.steps.values() for s in steps for r in s.thresholds})
