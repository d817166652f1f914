"""Arrow batch functions of the spans stage's ``mapInArrow`` steps (docs/spans.md, Exact substrings); no Spark."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.spans.exact import (
    Int64s,
    UInt64s,
    char_aligned,
    cut,
    merge_ranges,
    token_bounds,
    token_hashes,
    window_anchors,
    window_hashes,
)

KIND_EXACT = "exact_substring"
WINDOWS = pa.schema([("hash", pa.int64()), ("doc_id", pa.int64()), ("pos", pa.int32())])
REMOVED = pa.schema(
    [("doc_id", pa.int64()), ("source", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
     ("kind", pa.string()), ("copies", pa.int64()), ("kept_doc_id", pa.int64()), ("kept_start", pa.int64())]
)  # fmt: skip
REWRITE_COLUMNS = pa.schema([("removed_bytes", pa.int64()), ("emptied", pa.bool_())])
CANDIDATE_HASHES = pa.schema(
    [("whash", pa.int64()), ("doc_id", pa.int64()), ("pos", pa.int64()), ("start", pa.int64()), ("end", pa.int64())]
)
RUN_FIELDS = [("start", pa.int64()), ("end", pa.int64()), ("copies", pa.int64()), ("kept_doc_id", pa.int64()),
              ("kept_start", pa.int64())]  # fmt: skip
RUN_BYTES = pa.schema([("doc_id", pa.int64()), ("source", pa.string()), *RUN_FIELDS, ("bytes", pa.binary())])
CONFIRMED = pa.schema([("doc_id", pa.int64()), ("source", pa.string()), *RUN_FIELDS])


def _tokens(text: str, tokenizer: str) -> tuple[bytes, Int64s, Int64s, UInt64s]:
    data = text.encode("utf-8")
    starts, ends = token_bounds(data, tokenizer)
    return data, starts, ends, token_hashes(data, starts, ends)


def anchor_batches(batches: Iterable[pa.RecordBatch], k: int, tokenizer: str) -> Iterator[pa.RecordBatch]:
    """Documents (doc_id, text) -> one row per anchor of its windows of ``k`` tokens (exact.window_anchors):
    the anchor's hash, doc_id, token position."""
    for batch in batches:
        hashes, docs, positions = [], [], []
        for doc_id, text in zip(batch.column("doc_id").to_pylist(), batch.column("text").to_pylist(), strict=True):
            anchors, short = window_anchors(_tokens(text, tokenizer)[3], k)
            chosen = np.unique(anchors)
            hashes.append(short[chosen])
            docs.append(np.full(len(chosen), doc_id, dtype=np.int64))
            positions.append(chosen.astype(np.int32))
        if hashes:
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.concatenate(hashes)), pa.array(np.concatenate(docs)), pa.array(np.concatenate(positions))],
                schema=WINDOWS,
            )


def _slices(data: bytes, starts: Int64s, ends: Int64s) -> pa.Array:
    """The byte strings ``data[start:end]`` as one Arrow binary array, gathered with numpy."""
    lengths = ends - starts
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    inside = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], lengths) + np.repeat(starts, lengths)
    gathered = np.frombuffer(data, dtype=np.uint8)[inside]
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(starts), [None, pa.py_buffer(offsets), pa.py_buffer(gathered.tobytes())]
    ).cast(pa.binary())


def candidate_hash_batches(batches: Iterable[pa.RecordBatch], k: int, tokenizer: str) -> Iterator[pa.RecordBatch]:
    """Documents (doc_id, text, positions: its anchors whose hash repeats) -> one row per window of ``k`` tokens
    whose anchor is one of them: the window's own 64-bit hash (``whash``), doc_id, token position and byte
    range. No bytes: the copies a hash groups are confirmed on their bytes run by run (``run_bytes_batches``)."""
    for batch in batches:
        parts = []
        rows = zip(
            batch.column("doc_id").to_pylist(),
            batch.column("text").to_pylist(),
            batch.column("positions").to_pylist(),
            strict=True,
        )
        for doc_id, text, positions in rows:
            _, starts, ends, tokens = _tokens(text, tokenizer)
            anchors, _ = window_anchors(tokens, k)
            picked = np.flatnonzero(np.isin(anchors, np.array(positions, dtype=np.int64)))
            hashes = window_hashes(tokens, k)[picked]
            parts.append(
                pa.RecordBatch.from_arrays(
                    [
                        pa.array(hashes),
                        pa.array(np.full(len(picked), doc_id, dtype=np.int64)),
                        pa.array(picked.astype(np.int64)),
                        pa.array(starts[picked]),
                        pa.array(ends[picked + k - 1]),
                    ],
                    schema=CANDIDATE_HASHES,
                )  # fmt: skip
            )
        if parts:
            yield from pa.Table.from_batches(parts, schema=CANDIDATE_HASHES).combine_chunks().to_batches()


def _list_fields(column: pa.Array, names: list[str]) -> tuple[npt.NDArray[np.int64], dict[str, npt.NDArray[np.int64]]]:
    """A list<struct> column -> the list offsets and each named struct field as one flat int64 array."""
    offsets = np.concatenate(([0], np.cumsum(pc.list_value_length(column).fill_null(0).to_numpy())))
    values = pc.list_flatten(column)
    return offsets.astype(np.int64), {
        name: values.field(name).to_numpy(zero_copy_only=False).astype(np.int64) for name in names
    }


def run_bytes_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Documents (doc_id, source, text, claims: list of pos, start, end, copies, kept_doc_id, kept_pos,
    kept_start: every window of the document whose hash an earlier window has) -> one row per run of claims
    at consecutive positions whose kept copies are consecutive windows of one document: the run's byte range,
    the copies and kept copy of its first window, and its bytes (to compare with the kept copy's)."""
    names = ["pos", "start", "end", "copies", "kept_doc_id", "kept_pos", "kept_start"]
    for batch in batches:
        offsets, f = _list_fields(batch.column("claims"), names)
        out: dict[str, list[pa.Array]] = {name: [] for name in RUN_BYTES.names}
        rows = zip(batch.column("doc_id").to_pylist(), batch.column("source").to_pylist(),
                   batch.column("text").to_pylist(), strict=True)  # fmt: skip
        for i, (doc_id, source, text) in enumerate(rows):
            lo, hi = int(offsets[i]), int(offsets[i + 1])
            if hi == lo:
                continue
            order = np.argsort(f["pos"][lo:hi], kind="stable") + lo
            pos, kept_doc, kept_pos = f["pos"][order], f["kept_doc_id"][order], f["kept_pos"][order]
            new = np.ones(len(order), dtype=bool)
            new[1:] = (pos[1:] != pos[:-1] + 1) | (kept_doc[1:] != kept_doc[:-1]) | (kept_pos[1:] != kept_pos[:-1] + 1)
            heads = np.flatnonzero(new)
            lasts = np.concatenate((heads[1:] - 1, [len(order) - 1]))
            start, end = f["start"][order][heads], f["end"][order][lasts]
            out["doc_id"].append(pa.array(np.full(len(heads), doc_id, dtype=np.int64)))
            out["source"].append(pa.array([source] * len(heads), type=pa.string()))
            out["start"].append(pa.array(start))
            out["end"].append(pa.array(end))
            out["copies"].append(pa.array(f["copies"][order][heads]))
            out["kept_doc_id"].append(pa.array(kept_doc[heads]))
            out["kept_start"].append(pa.array(f["kept_start"][order][heads]))
            out["bytes"].append(_slices(text.encode("utf-8"), start, end))
        if out["doc_id"]:
            yield pa.RecordBatch.from_arrays(
                [pa.concat_arrays(out[name]) for name in RUN_BYTES.names], schema=RUN_BYTES
            )


def confirm_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Kept documents (kept_doc_id, text, runs: list of RUN_BYTES' other columns) -> the runs whose bytes equal
    the kept copy's bytes at ``kept_start``; a run that differs (its windows' hashes collided) is dropped, so a
    collision never removes text."""
    for batch in batches:
        out: dict[str, list[object]] = {name: [] for name in CONFIRMED.names}
        rows = zip(batch.column("kept_doc_id").to_pylist(), batch.column("text").to_pylist(),
                   batch.column("runs").to_pylist(), strict=True)  # fmt: skip
        for kept_doc_id, text, runs in rows:
            data = text.encode("utf-8")
            for run in runs:
                at = run["kept_start"]
                if data[at : at + len(run["bytes"])] != run["bytes"]:
                    continue
                for name in CONFIRMED.names:
                    out[name].append(kept_doc_id if name == "kept_doc_id" else run[name])
        yield pa.RecordBatch.from_pydict(out, schema=CONFIRMED)


def merged_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One document's removed windows (doc_id, source, windows: list of start, end, copies, kept_doc_id,
    kept_start) -> its merged ranges; each takes the copies and kept copy of the first window it holds."""
    for batch in batches:
        out: dict[str, list[object]] = {name: [] for name in REMOVED.names}
        rows = zip(batch.column("doc_id").to_pylist(), batch.column("source").to_pylist(),
                   batch.column("windows").to_pylist(), strict=True)  # fmt: skip
        for doc_id, source, windows in rows:
            windows = sorted(windows, key=lambda w: (w["start"], w["end"]))
            starts = np.array([w["start"] for w in windows], dtype=np.int64)
            merged_starts, merged_ends = merge_ranges(starts, np.array([w["end"] for w in windows], dtype=np.int64))
            firsts = np.searchsorted(starts, merged_starts)
            for start, end, first in zip(merged_starts.tolist(), merged_ends.tolist(), firsts.tolist(), strict=True):
                window = windows[first]
                out["doc_id"].append(doc_id)
                out["source"].append(source)
                out["start"].append(start)
                out["end"].append(end)
                out["kind"].append(KIND_EXACT)
                out["copies"].append(window["copies"])
                out["kept_doc_id"].append(window["kept_doc_id"])
                out["kept_start"].append(window["kept_start"])
        yield pa.RecordBatch.from_pydict(out, schema=REMOVED)


def rewrite_text(text: str, starts: list[int], ends: list[int]) -> tuple[str, int]:
    """``text`` without the byte ranges (in any order), shrunk to whole characters; the bytes removed."""
    data = text.encode("utf-8")
    s, e = char_aligned(data, *merge_ranges(np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)))
    kept = cut(data, s, e)
    return kept.decode("utf-8"), len(data) - len(kept)


def rewrite_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Documents with their removed ranges (``ranges``: list of start, end, or null) -> the documents' columns
    with the text rewritten, the bytes removed and whether nothing but whitespace is left (``emptied``)."""
    for batch in batches:
        texts, removed, emptied = [], [], []
        for text, ranges in zip(batch.column("text").to_pylist(), batch.column("ranges").to_pylist(), strict=True):
            if ranges:
                text, count = rewrite_text(text, [r["start"] for r in ranges], [r["end"] for r in ranges])
            else:
                count = 0
            texts.append(text)
            removed.append(count)
            emptied.append(count > 0 and not text.strip())
        columns = [
            pa.array(texts, type=pa.string()) if name == "text" else batch.column(name)
            for name in schema.names
            if name not in REWRITE_COLUMNS.names
        ]
        yield pa.RecordBatch.from_arrays(
            [*columns, pa.array(removed, type=pa.int64()), pa.array(emptied, type=pa.bool_())], schema=schema
        )
