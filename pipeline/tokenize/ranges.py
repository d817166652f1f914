"""Which tokenize partition a document goes to: equal-width ranges of ``doc_id``, placed by Spark's hash partitioning.

``repartitionByRange`` first runs a sampling job over its input plan, and for the tokenize stage that plan reads
every document's text: a whole extra scan of the survivors' largest column, only to choose the bounds. doc_ids are
64-bit hashes (docs/stages.md, doc_id), so equal-width ranges between a source's smallest and largest doc_id hold
about as many documents each; those two numbers come from the ``doc_id`` column alone. Spark's DataFrame API has
no partitioner taking given bounds, so each range ``b`` gets a *placement key*: a long whose Spark hash
(``hash()``: Murmur3 x86_32, seed 42, the function ``repartition(n, col)`` places rows by) is ``b`` modulo the
partition count, and the documents are repartitioned by their range's key. The task of partition ``b`` checks that
it received range ``b`` only (:func:`check_placed`), so a Spark that hashed otherwise fails the stage instead of
writing shards out of order.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from pipeline.errors import PipelineError

SPARK_HASH_SEED = 42  # Murmur3Hash's seed in Spark's hash() and HashPartitioning
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix(h1: np.ndarray, k1: np.ndarray) -> np.ndarray:
    k1 = _rotl(k1 * _C1, 15) * _C2
    h1 = _rotl(h1 ^ k1, 13)
    return h1 * np.uint32(5) + np.uint32(0xE6546B64)


def spark_hash_long(keys: np.ndarray) -> np.ndarray:
    """Spark's ``hash(k)`` of int64 ``keys`` as int32: Murmur3 x86_32 over the low then the high 32 bits."""
    bits = np.asarray(keys, dtype=np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        h = np.full(bits.shape, SPARK_HASH_SEED, dtype=np.uint32)
        h = _mix(h, (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        h = _mix(h, (bits >> np.uint64(32)).astype(np.uint32))
        h ^= np.uint32(8)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h.view(np.int32)


def placement_keys(partitions: int) -> list[int]:
    """For each partition ``b`` of ``partitions``, the smallest long ``k >= 0`` with ``pmod(hash(k), partitions) ==
    b``: rows repartitioned by ``k`` land in partition ``b``."""
    keys = np.full(partitions, -1, dtype=np.int64)
    start, step = 0, max(1024, 4 * partitions)
    while (keys < 0).any():
        candidates = np.arange(start, start + step, dtype=np.int64)
        buckets = np.mod(spark_hash_long(candidates).astype(np.int64), partitions)
        first = np.unique(buckets, return_index=True)
        todo = keys[first[0]] < 0
        keys[first[0][todo]] = candidates[first[1][todo]]
        start += step
    return [int(k) for k in keys]


def check_placed(batches: Iterator[pa.RecordBatch], partition: int, column: str = "range") -> Iterator[pa.RecordBatch]:
    """``batches`` as they come, after checking that every row's ``column`` is ``partition``."""
    import pyarrow.compute as pc

    for batch in batches:
        if batch.num_rows:
            low, high = pc.min_max(batch.column(column)).values()
            if low.as_py() != partition or high.as_py() != partition:
                raise PipelineError(
                    f"tokenize: partition {partition} received doc_id range {low.as_py()}..{high.as_py()}: this "
                    "Spark does not place rows by hash() (Murmur3, seed 42) modulo the partition count"
                )
        yield batch
