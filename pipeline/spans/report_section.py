"""report.json's ``spans`` entry (docs/spans.md, Report): bytes removed per source and kind, and the most repeated
removed spans with their copies, read from the stage's counts and ``spans/removed`` (no Spark)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pipeline.spans.batches import KIND_EXACT
from pipeline.spans.lines import KIND_LINES
from pipeline.spans.sentences import KIND_SENTENCES
from pipeline.stage_api import layout
from pipeline.stage_api.run_tables import count_rows, excerpt, has_table, iter_batches, rows_by_doc_id

TOP_SPANS = 10
EXCERPT_CHARS = 160
# removed ranges grouped at once: a large run's ranges are read in several passes, each holding the kept copies
# whose hash falls in it, so the report's memory does not grow with the run (a pass holds a few columns per range)
ROWS_PER_PASS = 1_000_000
COLUMNS = ("doc_id", "start", "end", "copies", "kept_doc_id", "kept_start")  # and kind
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


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
    chosen = top_ranges(run, top)
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


def top_ranges(run: str, top: int) -> list[dict[str, Any]]:
    """Of each kept copy (kind, kept_doc_id, kept_start), its longest removed range (the first of that length in
    file order); of those the ``top`` of the most copies, then the longest, the smallest ``doc_id``, the kept copy
    seen first. ``spans/removed`` is read in passes of about :data:`ROWS_PER_PASS` ranges (by a hash of the kept
    copy), each grouped with numpy, so no pass holds the whole table nor a Python object per range."""
    passes = max(1, math.ceil(count_rows(run, layout.SPANS_REMOVED) / ROWS_PER_PASS))
    kinds: dict[str, int] = {}
    best: list[tuple[tuple[int, int, int, int], dict[str, Any]]] = []
    for part in range(passes):
        best = sorted(best + _part_top(_read_part(run, part, passes, kinds), top, list(kinds)), key=lambda c: c[0])
        best = best[:top]
    return [row for _, row in best]


def _read_part(run: str, part: int, passes: int, kinds: dict[str, int]) -> dict[str, np.ndarray]:
    """The ranges whose kept copy hashes to ``part`` of ``passes``: their columns, ``kind`` as a code into
    ``kinds`` (filled in first-seen order) and ``order``, the range's position in the table (file order)."""
    import pyarrow.compute as pc

    pieces: dict[str, list[np.ndarray]] = {c: [] for c in (*COLUMNS, "kind", "order")}
    seen = 0
    for batch in iter_batches(run, layout.SPANS_REMOVED, [*COLUMNS, "kind"]):
        columns = {c: batch.column(c).to_numpy(zero_copy_only=False).astype(np.int64, copy=False) for c in COLUMNS}
        encoded = pc.dictionary_encode(batch.column("kind"))
        codes = np.array([kinds.setdefault(k, len(kinds)) for k in encoded.dictionary.to_pylist()], np.int64)
        columns["kind"] = codes[encoded.indices.to_numpy(zero_copy_only=False)]
        columns["order"] = np.arange(seen, seen + batch.num_rows, dtype=np.int64)
        seen += batch.num_rows
        keep = _hash(columns["kept_doc_id"], columns["kept_start"]) % np.uint64(passes) == np.uint64(part)
        for name, values in columns.items():
            pieces[name].append(values[keep])
    return {c: np.concatenate(v) if v else np.zeros(0, np.int64) for c, v in pieces.items()}


def _hash(doc_ids: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """A kept copy's hash (wrapping uint64 arithmetic), spreading the kept copies over the passes."""
    mixed: np.ndarray = (doc_ids.astype(np.uint64) * HASH_MULTIPLIER) ^ (starts.astype(np.uint64) * np.uint64(31))
    return mixed


def _part_top(
    part: dict[str, np.ndarray], top: int, kinds: list[str]
) -> list[tuple[tuple[int, int, int, int], dict[str, Any]]]:
    """The ``top`` kept copies of one pass: ``(sort key, row)``, the sort key ascending for the most copies,
    the longest range, the smallest doc_id, then the kept copy seen first."""
    if top <= 0 or len(part["order"]) == 0:
        return []
    length = part["end"] - part["start"]
    # by kept copy, its longest range first, of equal ones the first in the table
    order = np.lexsort((part["order"], -length, part["kept_start"], part["kept_doc_id"], part["kind"]))
    keys = np.stack([part["kind"][order], part["kept_doc_id"][order], part["kept_start"][order]])
    starts = np.flatnonzero(np.concatenate(([True], np.any(keys[:, 1:] != keys[:, :-1], axis=0))))
    first_seen = np.minimum.reduceat(part["order"][order], starts)
    rows = order[starts]
    ranked = np.lexsort((first_seen, part["doc_id"][rows], -length[rows], -part["copies"][rows]))[:top]
    out = []
    for i in ranked:
        row = rows[i]
        values = {c: int(part[c][row]) for c in COLUMNS}
        key = (-values["copies"], -(values["end"] - values["start"]), values["doc_id"], int(first_seen[i]))
        out.append((key, {**values, "kind": kinds[int(part["kind"][row])]}))
    return out
