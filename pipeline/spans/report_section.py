"""report.json's ``spans`` entry (docs/spans.md, Report): bytes removed per source and kind, and the most repeated
removed spans with their copies, read from the stage's counts and ``spans/removed`` (no Spark)."""

from __future__ import annotations

import heapq
from typing import Any

from pipeline.spans.batches import KIND_EXACT
from pipeline.spans.lines import KIND_LINES
from pipeline.spans.sentences import KIND_SENTENCES
from pipeline.stage_api import layout
from pipeline.stage_api.run_tables import excerpt, has_table, iter_rows, rows_by_doc_id

TOP_SPANS = 10
EXCERPT_CHARS = 160


def offsets_table(run: str, kind: str) -> str:
    """The table holding the text a removed span of ``kind`` has its offsets in: what that part read (the parts
    run lines, sentences, exact substrings, each on what the one before passed on; docs/spans.md, Files)."""
    before = {
        KIND_LINES: (),
        KIND_SENTENCES: (layout.SPANS_AFTER_LINES,),
        KIND_EXACT: (layout.SPANS_AFTER_SENTENCES, layout.SPANS_AFTER_LINES),
    }
    return next((table for table in before.get(kind, ()) if has_table(run, table)), layout.SURVIVORS)


def report_section(run: str, counts: dict[str, Any], top: int = TOP_SPANS) -> dict[str, Any]:
    """``{"spans": {"removed_bytes": {source: {kind: n}}, "removed_ranges": ..., "changed": {source: n},
    "emptied": {source: n}, "too_short": {source: n}, "most_repeated": [...]}}``."""
    sources = counts.get("sources", {})
    section: dict[str, Any] = {
        "removed_bytes": {name: dict(row.get("removed_bytes", {})) for name, row in sources.items()},
        "removed_ranges": {name: dict(row.get("removed_ranges", {})) for name, row in sources.items()},
        "changed": {name: row.get("changed", 0) for name, row in sources.items()},
        "emptied": {name: row.get("spans_emptied", 0) for name, row in sources.items()},
        "too_short": {name: row.get("spans_too_short", 0) for name, row in sources.items()},
        "most_repeated": [],
    }
    if has_table(run, layout.SPANS_REMOVED):
        section["most_repeated"] = _most_repeated(run, top)
    return {"spans": section}


def _most_repeated(run: str, top: int) -> list[dict[str, Any]]:
    """The ``top`` removed ranges of the most copies (one per kept copy), with the kept copy's text."""
    best: dict[tuple[str, int, int], dict[str, Any]] = {}
    columns = ["doc_id", "source", "start", "end", "kind", "copies", "kept_doc_id", "kept_start"]
    for rows in iter_rows(run, layout.SPANS_REMOVED, columns):
        for row in rows:
            key = (row["kind"], row["kept_doc_id"], row["kept_start"])
            if key not in best or best[key]["end"] - best[key]["start"] < row["end"] - row["start"]:
                best[key] = row
    chosen = heapq.nlargest(top, best.values(), key=lambda r: (r["copies"], r["end"] - r["start"], -r["doc_id"]))
    texts: dict[str, dict[int, dict[str, Any]]] = {}
    for kind in (KIND_LINES, KIND_SENTENCES, KIND_EXACT):
        table = offsets_table(run, kind)
        ids = [r["doc_id"] for r in chosen if r["kind"] == kind]
        texts[kind] = rows_by_doc_id(run, table, ids, ["doc_id", "text"]) if ids and has_table(run, table) else {}
    shown = []
    for row in chosen:
        text = texts.get(row["kind"], {}).get(row["doc_id"], {}).get("text")
        span = text.encode("utf-8")[row["start"] : row["end"]].decode("utf-8", "replace") if text else None
        shown.append(
            {
                "kind": row["kind"],
                "copies": row["copies"],
                "bytes": row["end"] - row["start"],
                "kept_doc_id": row["kept_doc_id"],
                "example_doc_id": row["doc_id"],
                "text": excerpt(span, EXCERPT_CHARS) if span is not None else None,
            }
        )
    return shown
