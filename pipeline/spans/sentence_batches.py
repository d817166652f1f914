"""Arrow batch functions of the spans stage's sentence part (docs/spans.md, Sentences); no Spark."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

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


def sentence_rewrite_batches(
    batches: Iterable[pa.RecordBatch], schema: pa.Schema, span: int, min_doc_words: int, min_num_sentences: int
) -> Iterator[pa.RecordBatch]:
    """Documents with their duplicated signatures (``dups``: list of sent, copies, kept_doc_id, kept_start, or
    null) -> the documents' columns with datatrove's rewritten text, the bytes it removed, whether the document
    is now too short (``too_short``) and the dropped runs in UTF-8 bytes of the text as it was (``runs``), each
    with the copies and kept copy of the duplicated signature that opened it."""
    for batch in batches:
        texts: list[str] = []
        removed: list[int] = []
        too_short: list[bool] = []
        runs: list[list[dict[str, int]]] = []
        for text, dups in zip(batch.column("text").to_pylist(), batch.column("dups").to_pylist(), strict=True):
            if not dups:
                texts.append(text)
                removed.append(0)
                too_short.append(not text)
                runs.append([])
                continue
            by_index = {d["sent"]: d for d in dups}
            after, dropped = drop_duplicates(text, sorted(by_index), span)
            offsets = byte_offsets(text)
            texts.append(after)
            removed.append(int(offsets[-1]) - len(after.encode("utf-8")))
            too_short.append(not long_enough(text, after, min_doc_words, min_num_sentences))
            runs.append(
                [
                    {
                        "start": int(offsets[start]),
                        "end": int(offsets[end]),
                        "copies": by_index[first]["copies"],
                        "kept_doc_id": by_index[first]["kept_doc_id"],
                        "kept_start": by_index[first]["kept_start"],
                    }
                    for start, end, first in dropped
                ]
            )
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
