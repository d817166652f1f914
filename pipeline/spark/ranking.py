"""Exact corpus-wide cuts of a weighted order (docs/stages.md, The fastText classifier, keep_top and buckets): the
rows ordered by score, highest first, ties by doc_id; a cut at fraction ``f`` is the last row whose rows before it
weigh less than ``f`` times the whole. One distributed sort, then two small jobs over its partitions: each
partition's count and weight, and one scan of each partition holding a cut (no per-task approximation, and
nothing gathered on the driver but a row per partition and per cut)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel, TaskContext
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipeline.spark.worker_task import per_task

Cut = tuple[float, int]  # (score, doc_id) of the last row a cut keeps


def _sums(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One row per partition: its index, rows and weight."""
    rows = weight = 0
    for batch in batches:
        rows += batch.num_rows
        weight += int(pc.sum(batch.column("w")).as_py() or 0)
    part = TaskContext.get().partitionId()  # type: ignore[union-attr]
    yield pa.RecordBatch.from_pydict({"part": [part], "n": [rows], "w": [weight]})


def _scan(wanted: dict[int, list[tuple[int, float]]], batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The cuts that fall in this partition: for each (cut, local target), its last row whose weight before it
    (within the partition) is below the target."""
    targets = wanted.get(TaskContext.get().partitionId(), [])  # type: ignore[union-attr]
    if not targets:
        return
    found: dict[int, Cut] = {}
    offset = 0
    for batch in batches:
        weights = batch.column("w").to_numpy(zero_copy_only=False).astype(np.int64)
        before = offset + np.cumsum(weights) - weights  # each row's weight before it, nondecreasing
        for cut, target in targets:
            k = int(np.searchsorted(before, target, side="left"))  # rows whose weight before is below target
            if k:
                found[cut] = (batch.column("s")[k - 1].as_py(), batch.column("doc_id")[k - 1].as_py())
        offset += int(weights.sum())
    yield pa.RecordBatch.from_pydict(
        {"cut": list(found), "s": [v[0] for v in found.values()], "doc_id": [v[1] for v in found.values()]},
        schema=pa.schema([("cut", pa.int64()), ("s", pa.float64()), ("doc_id", pa.int64())]),
    )


def cut_points(frame: DataFrame, fractions: Sequence[float]) -> tuple[list[Cut | None], int]:
    """The cut of each fraction over ``frame`` (columns ``s`` double, ``doc_id`` long, ``w`` long, no null score),
    and the total weight; a cut is None when no row comes before it (nothing weighs, or no row)."""
    ordered = frame.select("s", "doc_id", "w").orderBy(F.col("s").desc(), F.col("doc_id").asc())
    ordered = ordered.persist(StorageLevel.DISK_ONLY)  # the two jobs below read the same partitions
    try:
        sums = ordered.mapInArrow(per_task(_sums), "part long, n long, w long").collect()
        parts = sorted((r["part"], r["n"], r["w"]) for r in sums)
        total = sum(w for _, _, w in parts)
        wanted: dict[int, list[tuple[int, float]]] = {}
        for cut, fraction in enumerate(fractions):
            target = fraction * total
            offset, place = 0, None
            for part, n, w in parts:
                if n and offset < target:
                    place = (part, target - offset)
                offset += w
            if place is not None:
                wanted.setdefault(place[0], []).append((cut, place[1]))
        found: dict[int, Cut] = {}
        if wanted:
            schema = "cut long, s double, doc_id long"
            for row in ordered.mapInArrow(per_task(partial(_scan, wanted)), schema).collect():
                found[row["cut"]] = (row["s"], row["doc_id"])
        return [found.get(i) for i in range(len(fractions))], total
    finally:
        ordered.unpersist()


def at_or_before(score: Column, doc_id: Column, cut: Cut | None) -> Column:
    """Whether a row comes at or before ``cut`` in the order (false for every row when there is no cut)."""
    if cut is None:
        return F.lit(False)
    return (score > F.lit(cut[0])) | ((score == F.lit(cut[0])) & (doc_id <= F.lit(cut[1])))
