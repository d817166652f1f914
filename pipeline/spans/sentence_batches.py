"""Arrow batch functions of the spans stage's sentence part (docs/spans.md, Sentences); no Spark."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa

from pipeline.spans.sentences import byte_offsets, drop_duplicates, long_enough, signatures

SIGNATURES = pa.schema([("hash", pa.int64()), ("doc_id", pa.int64()), ("sent", pa.int32()), ("start", pa.int64())])
RUN = pa.struct(
    [("start", pa.int64()), ("end", pa.int64()), ("copies", pa.int64()), ("kept_doc_id", pa.int64()),
     ("kept_start", pa.int64())]
)  # fmt: skip
SENTENCE_COLUMNS = pa.schema([("removed_bytes", pa.int64()), ("too_short", pa.bool_()), ("runs", pa.list_(RUN))])


def signature_batches(batches: Iterable[pa.RecordBatch], span: int) -> Iterator[pa.RecordBatch]:
    """Documents (doc_id, text) -> one row per signature (sentences.signatures): hash, doc_id, the index of its
    first sentence (``sent``) and that sentence's UTF-8 byte offset (``start``)."""
    for batch in batches:
        out: dict[str, list[int]] = {name: [] for name in SIGNATURES.names}
        for doc_id, text in zip(batch.column("doc_id").to_pylist(), batch.column("text").to_pylist(), strict=True):
            found = signatures(text, span)
            if not found:
                continue
            offsets = byte_offsets(text)
            for value, index, start in found:
                out["hash"].append(value)
                out["doc_id"].append(doc_id)
                out["sent"].append(index)
                out["start"].append(int(offsets[start]))
        yield pa.RecordBatch.from_pydict(out, schema=SIGNATURES)


Rewrite = Callable[[str, list[dict[str, Any]]], tuple[str, int, bool, list[dict[str, int]]]]


def rewrite_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema, rewrite: Rewrite) -> Iterator[pa.RecordBatch]:
    """Documents with their duplicates (``dups``, a list or null) -> the documents' columns with ``rewrite``'s text,
    the bytes it removed (``removed_bytes``), ``too_short`` and the dropped ``runs``, in SENTENCE_COLUMNS: the
    batch loop of every spans part that rewrites documents, ``rewrite(text, dups)`` deciding each one."""
    for batch in batches:
        texts: list[str] = []
        removed: list[int] = []
        too_short: list[bool] = []
        runs: list[list[dict[str, int]]] = []
        for text, dups in zip(batch.column("text").to_pylist(), batch.column("dups").to_pylist(), strict=True):
            after, gone, short, dropped = rewrite(text, dups or [])
            texts.append(after)
            removed.append(gone)
            too_short.append(short)
            runs.append(dropped)
        columns = [
            pa.array(texts, type=pa.string()) if name == "text" else batch.column(name)
            for name in schema.names
            if name not in SENTENCE_COLUMNS.names
        ]
        yield pa.RecordBatch.from_arrays(
            [
                *columns,
                pa.array(removed, type=pa.int64()),
                pa.array(too_short, type=pa.bool_()),
                pa.array(runs, type=pa.list_(RUN)),
            ],
            schema=schema,
        )


def dropped_run(start: int, end: int, dup: dict[str, Any]) -> dict[str, int]:
    """A dropped run in UTF-8 bytes of the text as it was, with the copies and kept copy of the duplicate that
    opened it."""
    return {"start": start, "end": end, **{k: dup[k] for k in ("copies", "kept_doc_id", "kept_start")}}


def sentence_rewrite_batches(
    batches: Iterable[pa.RecordBatch], schema: pa.Schema, span: int, min_doc_words: int, min_num_sentences: int
) -> Iterator[pa.RecordBatch]:
    """Documents with their duplicated signatures (``dups``: list of sent, copies, kept_doc_id, kept_start, or
    null) -> the documents' columns with datatrove's rewritten text, the bytes it removed, whether the document
    is now too short (``too_short``) and the dropped runs in UTF-8 bytes of the text as it was (``runs``), each
    with the copies and kept copy of the duplicated signature that opened it."""

    def rewrite(text: str, dups: list[dict[str, Any]]) -> tuple[str, int, bool, list[dict[str, int]]]:
        if not dups:
            return text, 0, not text, []
        by_index = {d["sent"]: d for d in dups}
        after, dropped = drop_duplicates(text, sorted(by_index), span)
        offsets = byte_offsets(text)
        short = not long_enough(text, after, min_doc_words, min_num_sentences)
        runs = [dropped_run(int(offsets[start]), int(offsets[end]), by_index[first]) for start, end, first in dropped]
        return after, int(offsets[-1]) - len(after.encode("utf-8")), short, runs

    return rewrite_batches(batches, schema, rewrite)
