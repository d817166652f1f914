"""Arrow in, Arrow out for the train-tokenizer stage (no Spark import): texts -> pre-token counts."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from pipeline.tokenizer.pretokenize import count_pretokens

COUNT_SCHEMA = pa.schema([("pretoken", pa.binary()), ("count", pa.int64())])


def count_partition(
    batches: Iterator[pa.RecordBatch], specials: list[str], pattern: str | None = None
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: one Counter of pre-token bytes per partition (split by ``pattern``, GPT-2's when
    ``None``), emitted in bounded batches."""
    texts = (t for b in batches for t in b.column("text").to_pylist() if t)
    counts = count_pretokens(texts, specials, pattern)
    items = list(counts.items())
    for start in range(0, len(items), 65536):
        chunk = items[start : start + 65536]
        yield pa.RecordBatch.from_arrays(
            [pa.array([k for k, _ in chunk], pa.binary()), pa.array([v for _, v in chunk], pa.int64())],
            schema=COUNT_SCHEMA,
        )
