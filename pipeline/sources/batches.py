"""Arrow in, Arrow out for reading sources (no Spark import): split rows -> record batches."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa

from pipeline.sources.doc_id import doc_id
from pipeline.sources.records import RecordRules, RejectReason, excerpt
from pipeline.sources.splits import Split, read_split

RECORD_SCHEMA = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("source", pa.string()),
        ("file", pa.string()),
        ("position", pa.int64()),
        ("text", pa.string()),
        ("meta", pa.string()),
        ("reason", pa.string()),
        ("detail", pa.string()),
        ("excerpt", pa.string()),
    ]
)
BATCH_ROWS = 4096


def records_to_batches(
    splits: Iterator[pa.RecordBatch],
    rules_by_source: dict[str, RecordRules],
    want: str = "all",
    on_reject: Callable[[Split], None] | None = None,
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: read every split of the incoming batches, emit record batches.

    ``want`` is "documents", "rejects" or "all": each output is written by its own pass that ships
    only its own rows to the JVM. ``on_reject(split)`` is called for every reject a pass meets
    (kept or not), so the documents pass can name the splits a rejects pass has to read again.
    """
    keep_docs, keep_rejects = want in ("all", "documents"), want in ("all", "rejects")
    columns: dict[str, list] = {name: [] for name in RECORD_SCHEMA.names}

    def add(split: Split, position: int, text, meta, reason, detail, raw_excerpt) -> None:
        for key, value in zip(
            RECORD_SCHEMA.names,
            (
                doc_id(split.source, split.rel_path, position),
                split.source,
                split.rel_path,
                position,
                text,
                meta,
                reason,
                detail,
                raw_excerpt,
            ),
            strict=True,
        ):
            columns[key].append(value)

    def flush() -> pa.RecordBatch:
        batch = pa.RecordBatch.from_pydict(columns, schema=RECORD_SCHEMA)
        for values in columns.values():
            values.clear()
        return batch

    for batch in splits:
        for row in batch.to_pylist():
            split = Split(**row)
            rules = rules_by_source[split.source]
            last = -1
            try:
                for position, parsed, raw in read_split(split, rules):
                    last = position
                    if parsed.reason is None:
                        if keep_docs:
                            add(split, position, parsed.text, parsed.meta, None, None, None)
                    else:
                        if on_reject is not None:
                            on_reject(split)
                        if not keep_rejects:
                            continue
                        add(
                            split,
                            position,
                            None,
                            None,
                            parsed.reason.value,
                            _printable(parsed.detail),
                            excerpt(raw, rules.excerpt_chars),
                        )
                    if len(columns["doc_id"]) >= BATCH_ROWS:
                        yield flush()
            except Exception as exc:  # corrupt archive, truncated file: the rest of the split is a reject
                if on_reject is not None:
                    on_reject(split)
                if keep_rejects:
                    add(
                        split,
                        last + 1,
                        None,
                        None,
                        RejectReason.UNREADABLE_FILE.value,
                        _printable(f"{type(exc).__name__}: {exc}"[:500]),
                        "",
                    )
    if columns["doc_id"]:
        yield flush()


def _printable(detail: str) -> str:
    """A reject's detail as valid UTF-8 (an exception message may echo a lone surrogate)."""
    return detail.encode("utf-8", errors="replace").decode("utf-8")
