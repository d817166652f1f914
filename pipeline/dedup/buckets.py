"""Exact-duplicate groups and LSH candidate edges of a whole corpus in one process (no Spark import).

The numpy twins of the distributed steps (docs/dedup.md, Edges): the same rows as
``exact_groups`` and ``candidate_edges`` in :mod:`pipeline.dedup.spark.candidates`, for corpora small enough that
one task holds every document's band keys.
"""

from __future__ import annotations

import numpy as np


def exact_groups(
    h1: np.ndarray, h2: np.ndarray, rank_r: np.ndarray, doc_id: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(members, rep)``: positions of every document whose content hash (h1, h2) occurs more than once,
    and the doc_id of its group's best-ranked copy (smallest ``(rank_r, doc_id)``)."""
    order = np.lexsort((doc_id, rank_r, h2, h1))
    a, b = h1[order], h2[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    starts = np.flatnonzero(first)
    sizes = np.diff(np.append(starts, len(order)))
    group_of = np.cumsum(first) - 1  # group number of each sorted row
    in_group = sizes[group_of] > 1
    rep = doc_id[order[starts]][group_of]
    return order[in_group], rep[in_group]


def candidate_edges(doc_id: np.ndarray, keys: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct star edges ``(src, dst)``: every member of a bucket to the bucket's smallest doc_id.

    Document ``i`` has band keys ``keys[offsets[i]:offsets[i+1]]``, band ``b`` at position ``b``; a bucket
    is one (band, key).
    """
    lengths = np.diff(offsets)
    owner = np.repeat(doc_id, lengths)
    band = np.arange(len(keys), dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    order = np.lexsort((owner, keys, band))
    band, key, member = band[order], keys[order], owner[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (band[1:] != band[:-1]) | (key[1:] != key[:-1])
    head = member[np.flatnonzero(first)][np.cumsum(first) - 1]
    src, dst = member[~first], head[~first]  # a bucket's first row is its head: no self loop
    pairs = np.lexsort((dst, src))
    src, dst = src[pairs], dst[pairs]
    fresh = np.ones(len(src), dtype=bool)
    fresh[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    return src[fresh], dst[fresh]
