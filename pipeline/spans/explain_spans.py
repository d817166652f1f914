"""What the spans stage did to one document, for ``pipeline explain`` and ``pipeline sample --spans``
(docs/spans.md, Explain and sample): its removed spans marked in its text, and its text before and after.
Read back from the run directory with pyarrow (no Spark)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pyarrow.compute as pc

from pipeline.errors import PipelineError
from pipeline.spans.batches import KIND_EXACT
from pipeline.spans.lines import KIND_LINES
from pipeline.spans.report_section import offsets_table
from pipeline.stage_api import layout
from pipeline.stage_api.run_tables import excerpt, has_table, iter_rows, read_rows, rows_by_doc_id

OPEN, CLOSE = "[-", "-]"  # around a removed span in the marked text
CONTEXT = 80  # characters shown on each side of a removed span
SPAN_SHOWN = 240  # characters of a removed span shown (its middle elided beyond)
STATUS_TABLES = {"emptied": layout.SPANS_EMPTIED, "too_short": layout.SPANS_TOO_SHORT}


def _cut_text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", "replace")


def _elide(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} … {text[-half:]}"


def marked(text: str, ranges: list[tuple[int, int]], context: int = CONTEXT) -> list[str]:
    """One line per removed byte range of ``text``: up to ``context`` characters before and after, the span
    between ``[-`` and ``-]`` (its middle elided when long), whitespace shown as one space."""
    data = text.encode("utf-8")
    lines = []
    for start, end in sorted(ranges):
        before = _cut_text(data, 0, start)[-context:]
        after = _cut_text(data, end, len(data))[:context]
        span = _elide(_cut_text(data, start, end), SPAN_SHOWN)
        lines.append(" ".join(f"…{before}{OPEN}{span}{CLOSE}{after}…".split()))
    return lines


def _texts(run: str, table: str, doc_id: int) -> str | None:
    if not has_table(run, table):
        return None
    row = rows_by_doc_id(run, table, [doc_id], ["doc_id", "text"]).get(doc_id)
    return None if row is None else row["text"]


def document_spans(run: str, doc_id: int) -> dict[str, Any] | None:
    """The spans stage's record of ``doc_id``: ``status`` (passed on, emptied, too_short), the removed rows
    (kind, start, end, copies, kept copy) each with its marked context, and the text after the stage.
    None when the run has no spans stage or the document never reached it."""
    if not has_table(run, layout.SPANS_REMOVED):
        return None
    before = _texts(run, layout.SURVIVORS, doc_id)
    if before is None:
        return None
    rows = read_rows(run, layout.SPANS_REMOVED, None, pc.field("doc_id") == doc_id)
    status = "passed on"
    for name, table in STATUS_TABLES.items():
        if has_table(run, table) and rows_by_doc_id(run, table, [doc_id]):
            status = name
    order = {KIND_LINES: 0, KIND_EXACT: 2}  # the order the parts ran in; sentences between
    removed = []
    for row in sorted(rows, key=lambda r: (order.get(r["kind"], 1), r["start"])):
        table = offsets_table(run, row["kind"])  # the text the part that removed it read
        text = before if table == layout.SURVIVORS else _texts(run, table, doc_id)
        removed.append(
            {
                **{k: row[k] for k in ("kind", "start", "end", "copies", "kept_doc_id", "kept_start")},
                "offsets_in": "survivor" if table == layout.SURVIVORS else table.rsplit("/", 1)[-1],
                "marked": marked(text or "", [(row["start"], row["end"])])[0],
            }
        )
    return {"status": status, "removed": removed, "after": _texts(run, layout.SPANS_DOCUMENTS, doc_id)}


def format_spans(info: dict[str, Any]) -> list[str]:
    """``document_spans`` as lines a person reads."""
    lines = [f"spans stage: {info['status']}, {len(info['removed'])} span(s) removed"]
    for row in info["removed"]:
        kept = f"kept copy in {row['kept_doc_id']} at byte {row['kept_start']}"
        lines.append(
            f"  {row['kind']} bytes {row['start']}-{row['end']} of the {row['offsets_in']} text, "
            f"{row['copies']} copies, {kept}:"
        )
        lines.append(f"    {row['marked']}")
    return lines


def _changed(run: str) -> Iterator[list[int]]:
    for rows in iter_rows(run, layout.SPANS_REMOVED, ["doc_id"]):
        yield [r["doc_id"] for r in rows]


def sample_spans(run: str, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` random documents the spans stage cut (drawn by their removed spans, so a document with more spans
    is likelier), each with its text before and after and its removed spans marked."""
    if not has_table(run, layout.SPANS_REMOVED):
        raise PipelineError(f"{run} has no {layout.SPANS_REMOVED}/: the spans stage did not run")
    rng = random.Random(seed)
    picked: list[int] = []
    seen = 0
    for batch in _changed(run):  # reservoir of 4n rows, then the first n distinct documents among them
        for doc_id in batch:
            seen += 1
            if len(picked) < 4 * n:
                picked.append(doc_id)
            elif (slot := rng.randrange(seen)) < 4 * n:
                picked[slot] = doc_id
    chosen = list(dict.fromkeys(picked))[:n]
    before = rows_by_doc_id(run, layout.SURVIVORS, chosen, ["doc_id", "source", "text"])
    out = []
    for doc_id in chosen:
        info = document_spans(run, doc_id) or {"status": "?", "removed": [], "after": None}
        row = before.get(doc_id, {})
        out.append(
            {
                "kind": "spans",
                "doc_id": doc_id,
                "source": row.get("source"),
                "status": info["status"],
                "before": excerpt(row.get("text") or "", 400),
                "after": None if info["after"] is None else excerpt(info["after"], 400),
                "removed": info["removed"],
            }
        )
    return out


def format_spans_sample(row: dict[str, Any]) -> str:
    """One sampled document: before, after and its marked spans."""
    after = "(removed)" if row["after"] is None else " ".join(row["after"].split())
    lines = [
        f"spans    {row['doc_id']:>20}  {row['source']} {row['status']}, {len(row['removed'])} span(s) removed",
        f"    before: {' '.join(row['before'].split())}",
        f"    after:  {after}",
    ]
    lines += [f"    {r['kind']}: {r['marked']}" for r in row["removed"]]
    return "\n".join(lines)
