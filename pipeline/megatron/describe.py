"""Summaries of a dataset for humans: counts, a length histogram and decoded samples."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pipeline.megatron.reader import IndexedDataset


def document_lengths(ds: IndexedDataset) -> np.ndarray:
    """Tokens per document (sum of its sequences' lengths), int64."""
    cum = np.zeros(len(ds) + 1, dtype=np.int64)
    np.cumsum(ds.sequence_lengths, dtype=np.int64, out=cum[1:])
    docs = np.asarray(ds.document_indices, dtype=np.int64)
    return cum[docs[1:]] - cum[docs[:-1]]


def length_histogram(lengths: np.ndarray) -> list[dict[str, int]]:
    """Power-of-two buckets ``[lo, hi)`` (first bucket ``[0, 1)``) with their counts; empty ones dropped."""
    if len(lengths) == 0:
        return []
    top = int(lengths.max())
    edges = [0, 1]
    while edges[-1] <= top:
        edges.append(edges[-1] * 2)
    counts, _ = np.histogram(lengths, bins=np.array(edges, dtype=np.int64))
    return [{"min": edges[i], "max_exclusive": edges[i + 1], "count": int(c)} for i, c in enumerate(counts) if c]


def describe_dataset(
    prefix: str,
    decode: Callable[[Sequence[int]], str] | None = None,
    n_samples: int = 3,
    max_sample_tokens: int = 256,
) -> dict[str, Any]:
    """Counts, document-length statistics and histogram, and the first ``n_samples`` documents.

    Each sample holds its first ``max_sample_tokens`` token ids and, when ``decode`` is given,
    their text. Intended for ``pipeline inspect <prefix>``.
    """
    ds = IndexedDataset(prefix)
    lengths = document_lengths(ds)
    stats: dict[str, float | int] = {}
    if len(lengths):
        p50, p90, p99 = np.percentile(lengths, [50, 90, 99])
        stats = {
            "min": int(lengths.min()),
            "mean": float(lengths.mean()),
            "p50": float(p50),
            "p90": float(p90),
            "p99": float(p99),
            "max": int(lengths.max()),
        }
    samples = []
    for doc in range(min(n_samples, ds.num_documents)):
        tokens = ds.document(doc)
        shown = [int(t) for t in tokens[:max_sample_tokens]]
        sample: dict[str, Any] = {
            "document": doc,
            "num_tokens": int(len(tokens)),
            "truncated": len(tokens) > max_sample_tokens,
            "tokens": shown,
        }
        if decode is not None:
            sample["text"] = decode(shown)
        samples.append(sample)
    return {
        "prefix": str(prefix),
        "dtype": ds.dtype.name,
        "documents": ds.num_documents,
        "sequences": len(ds),
        "tokens": int(lengths.sum()) if len(lengths) else 0,
        "document_length": stats,
        "length_histogram": length_histogram(lengths),
        "samples": samples,
    }
