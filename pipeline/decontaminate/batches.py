"""Arrow batch functions of the decontamination step's ``mapInArrow`` calls (no Spark import).

Hashes are unsigned 64-bit in the kernel and travel through Spark as signed ``long`` (same bits).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from pipeline.decontaminate.ngrams import ngram_hashes

REFERENCE_NGRAM_SCHEMA = pa.schema([("reference", pa.string()), ("hash", pa.int64()), ("ngram", pa.string())])
DOC_NGRAM_SCHEMA = pa.schema([("doc_id", pa.int64()), ("hash", pa.int64())])


def reference_ngrams(batches: Iterator[pa.RecordBatch], n: int) -> Iterator[pa.RecordBatch]:
    """(source, text) of reference texts -> (reference, hash, ngram), distinct per text.

    A text with fewer than ``n`` words yields one row with a null hash, so it is counted, not lost.
    """
    for batch in batches:
        refs: list[str] = []
        hashes: list[int | None] = []
        grams: list[str | None] = []
        for name, text in zip(batch.column("source").to_pylist(), batch.column("text").to_pylist(), strict=True):
            h, g = ngram_hashes(text, n)
            if len(h) == 0:
                refs.append(name)
                hashes.append(None)
                grams.append(None)
                continue
            refs.extend([name] * len(h))
            hashes.extend(h.view(np.int64).tolist())
            grams.extend(g)
        yield pa.RecordBatch.from_arrays(
            [pa.array(refs, pa.string()), pa.array(hashes, pa.int64()), pa.array(grams, pa.string())],
            schema=REFERENCE_NGRAM_SCHEMA,
        )


def doc_ngrams(batches: Iterator[pa.RecordBatch], n: int) -> Iterator[pa.RecordBatch]:
    """(doc_id, text) -> (doc_id, hash) for every distinct n-gram of each document (the join path)."""
    for batch in batches:
        ids, hashes = [], []
        for doc, text in zip(batch.column("doc_id").to_pylist(), batch.column("text").to_pylist(), strict=True):
            h, _ = ngram_hashes(text, n)
            ids.extend([doc] * len(h))
            hashes.append(h.view(np.int64))
        flat = np.concatenate(hashes) if hashes else np.zeros(0, np.int64)
        yield pa.RecordBatch.from_arrays(
            [pa.array(ids, pa.int64()), pa.array(flat, pa.int64())], schema=DOC_NGRAM_SCHEMA
        )
