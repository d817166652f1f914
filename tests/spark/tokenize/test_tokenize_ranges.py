"""The tokenize stage's partitioning (pipeline/tokenize/ranges.py): Spark's own hash() as the oracle for the placement
keys, and each partition holding exactly its doc_id range, in doc_id order."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from pipeline.errors import PipelineError
from pipeline.tokenize.ranges import check_placed, placement_keys, spark_hash_long
from pipeline.tokenize.stage import partitioned

EDGES = [0, 1, -1, 2**31 - 1, -(2**31), 2**32, 2**63 - 1, -(2**63)]


def test_spark_hash_long_is_sparks_hash(spark) -> None:
    from pyspark.sql import functions as F

    rng = random.Random(7)
    keys = EDGES + [rng.randrange(-(2**63), 2**63) for _ in range(300)] + list(range(50))
    frame = spark.createDataFrame([(k,) for k in keys], "k long")
    expected = [row[0] for row in frame.select(F.hash("k")).collect()]
    assert spark_hash_long(np.array(keys, dtype=np.int64)).tolist() == expected


@pytest.mark.parametrize("parts", [1, 2, 3, 8, 100, 4099])
def test_placement_keys_hash_to_their_partition(parts: int) -> None:
    keys = placement_keys(parts)
    assert len(keys) == parts and min(keys) >= 0
    assert (np.mod(spark_hash_long(np.array(keys, np.int64)).astype(np.int64), parts) == np.arange(parts)).all()


@pytest.mark.parametrize(("parts", "placed"), [(1, True), (3, True), (8, True), (3, False)])
def test_each_partition_holds_its_range_in_doc_id_order(spark, monkeypatch, parts: int, placed: bool) -> None:
    """Reading the partitions in order gives doc_id order; partition b holds range b only; ranges of hashes are
    about equal. Also with Spark's repartitionByRange, taken above PLACED_PARTITIONS."""
    from pyspark.sql import functions as F

    from pipeline.tokenize import stage

    if not placed:
        monkeypatch.setattr(stage, "PLACED_PARTITIONS", parts - 1)

    rng = random.Random(parts)
    ids = list(dict.fromkeys(EDGES + [rng.randrange(-(2**63), 2**63) for _ in range(600)]))
    docs = spark.createDataFrame([(i, f"t{i}") for i in ids], "doc_id long, text string")
    frame = partitioned(docs, parts, min(ids), max(ids)).withColumn("part", F.spark_partition_id())
    rows = frame.withColumn("doc_id", F.substring("text", 2, 40).cast("long")).collect()
    assert all(r["part"] == r["range"] for r in rows)
    by_part = [[r["doc_id"] for r in rows if r["part"] == p] for p in range(parts)]
    assert [i for part in by_part for i in part] == sorted(ids)
    assert min(map(len, by_part)) > len(ids) / parts / 2  # hashes spread over equal-width ranges


def test_a_misplaced_row_fails_the_task() -> None:
    batch = pa.RecordBatch.from_pydict({"range": pa.array([2, 2, 3], pa.int32()), "text": ["a", "b", "c"]})
    empty = pa.RecordBatch.from_pydict({"range": pa.array([], pa.int32()), "text": pa.array([], pa.string())})
    assert list(check_placed(iter([empty, batch.slice(0, 2)]), 2)) == [empty, batch.slice(0, 2)]
    with pytest.raises(PipelineError, match="partition 2 received doc_id range 2..3"):
        list(check_placed(iter([batch]), 2))
