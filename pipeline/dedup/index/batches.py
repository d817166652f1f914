"""Arrow body verifying candidate (run document, indexed document) pairs by exact Jaccard (no Spark)."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from pipeline.dedup.jaccard import jaccard
from pipeline.dedup.shingles import shingle_set

MATCH_SCHEMA = pa.schema(
    [("doc_id", pa.int64()), ("index_run", pa.string()), ("index_doc_id", pa.int64()), ("jaccard", pa.float64())]
)
MATCH_DDL = "doc_id long, index_run string, index_doc_id long, jaccard double"


def pair_jaccards(
    batches: Iterator[pa.RecordBatch], ngram: int, shingle: str, max_shingles: int | None, threshold: float
) -> Iterator[pa.RecordBatch]:
    """(doc_id, text, index_run, index_doc_id, index_text) -> the pairs whose shingle-set Jaccard >= threshold.

    The same shingles and the same comparison as the within-run verification (docs/dedup.md, Verification).
    """
    for batch in batches:
        cols = batch.to_pydict()
        out: dict[str, list[object]] = {name: [] for name in MATCH_SCHEMA.names}
        for doc, text, run, other, other_text in zip(
            cols["doc_id"], cols["text"], cols["index_run"], cols["index_doc_id"], cols["index_text"], strict=True
        ):
            value = jaccard(
                shingle_set(text, ngram, shingle, max_shingles), shingle_set(other_text, ngram, shingle, max_shingles)
            )
            if value >= threshold:
                for key, v in zip(MATCH_SCHEMA.names, (doc, run, other, value), strict=True):
                    out[key].append(v)
        yield pa.RecordBatch.from_pydict(out, schema=MATCH_SCHEMA)
