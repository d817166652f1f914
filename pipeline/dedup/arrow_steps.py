"""Arrow-batch bodies of the dedup stage's ``mapInArrow`` steps (no Spark import).

Each function maps an iterator of ``pyarrow.RecordBatch`` to another, so Spark can run it on
executors over whole batches: signatures are vectorised per batch, never per row.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.dedup.bands import band_keys
from pipeline.dedup.hashes import shingle_hashes
from pipeline.dedup.jaccard import text_jaccard
from pipeline.dedup.minhash import signatures_from_hashes
from pipeline.dedup.shingles import count_tokens

BAND_SCHEMA = pa.schema([("doc_id", pa.int64()), ("band", pa.int32()), ("key", pa.int64())])
PAIR_SCHEMA = pa.schema([("src", pa.int64()), ("dst", pa.int64()), ("jaccard", pa.float64())])


@dataclass(frozen=True)
class LshParams:
    """Everything a task needs to turn texts into band keys."""

    num_perm: int
    seed: int
    ngram: int
    scheme: str
    hash: str
    shingle: str
    max_shingles: int | None
    bands: int
    rows: int


def with_token_counts(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Append an ``ntokens`` column (word tokens, as shingling counts them) to every batch."""
    for batch in batches:
        counts = [count_tokens(t) for t in batch.column("text").to_pylist()]
        yield pa.RecordBatch.from_arrays([*batch.columns, pa.array(counts, pa.int64())],
                                         names=[*batch.schema.names, "ntokens"])


def band_rows(batches: Iterator[pa.RecordBatch], p: LshParams) -> Iterator[pa.RecordBatch]:
    """(doc_id, text) batches -> one (doc_id, band, key) row per document and band."""
    for batch in batches:
        if batch.num_rows == 0:
            continue
        ids = batch.column("doc_id").to_numpy(zero_copy_only=False)
        hashes, offsets = shingle_hashes(batch.column("text").to_pylist(), p.ngram, p.shingle,
                                         p.max_shingles, p.hash)
        sigs = signatures_from_hashes(hashes, offsets, p.num_perm, p.seed, p.scheme)
        keys = band_keys(sigs, p.bands, p.rows).view(np.int64)
        yield pa.RecordBatch.from_arrays(
            [pa.array(np.repeat(ids, p.bands)), pa.array(np.tile(np.arange(p.bands, dtype=np.int32), len(ids))),
             pa.array(keys.reshape(-1))], schema=BAND_SCHEMA)


def pair_jaccards(batches: Iterator[pa.RecordBatch], ngram: int, shingle: str,
                  max_shingles: int | None) -> Iterator[pa.RecordBatch]:
    """(src, dst, src_text, dst_text) batches -> (src, dst, exact Jaccard of their shingle sets)."""
    for batch in batches:
        a = batch.column("src_text").to_pylist()
        b = batch.column("dst_text").to_pylist()
        values = [text_jaccard(x, y, ngram, shingle, max_shingles) for x, y in zip(a, b, strict=True)]
        yield pa.RecordBatch.from_arrays(
            [batch.column("src"), batch.column("dst"), pa.array(values, pa.float64())], schema=PAIR_SCHEMA)
