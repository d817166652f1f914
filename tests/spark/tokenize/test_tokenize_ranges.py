"""The tokenize stage's doc_id ranges (pipeline.tokenize.batches.ranges_of): Spark's own double arithmetic as the
oracle (the expression the stage's earlier Spark plan placed rows by), so the shards hold the documents they held."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pipeline.tokenize.batches import ranges_of

pytestmark = pytest.mark.spark

EDGES = [0, 1, -1, 2**31 - 1, -(2**31), 2**32, 2**53 + 1, -(2**53) - 1, 2**63 - 1, -(2**63)]


def _spark_ranges(spark, ids: list[int], lowest: int, highest: int, parts: int) -> list[int]:
    from pyspark.sql import functions as F

    width = (float(highest) - float(lowest)) / parts
    frame = spark.createDataFrame([(i, k) for i, k in enumerate(ids)], "i int, doc_id long")
    if width <= 0:
        at = F.lit(0)
    else:
        at = F.floor((F.col("doc_id").cast("double") - F.lit(float(lowest))) / F.lit(width)).cast("int")
        at = F.least(F.greatest(at, F.lit(0)), F.lit(parts - 1))
    return [r["r"] for r in frame.select("i", at.alias("r")).orderBy("i").collect()]


@pytest.mark.parametrize("parts", [1, 2, 3, 8, 100, 4099])
def test_ranges_are_sparks_equal_width_ranges(spark, parts: int) -> None:
    rng = random.Random(parts)
    ids = EDGES + [rng.randrange(-(2**63), 2**63) for _ in range(500)]
    for lowest, highest in ((min(ids), max(ids)), (-5, 1000), (7, 7)):
        inside = [i for i in ids if lowest <= i <= highest] or [lowest]
        got = ranges_of(np.array(inside, dtype=np.int64), lowest, highest, parts)
        assert got.tolist() == _spark_ranges(spark, inside, lowest, highest, parts)


def test_ranges_rise_with_doc_id_and_spread_hashes_evenly() -> None:
    rng = random.Random(3)
    ids = np.array(sorted({rng.randrange(-(2**63), 2**63) for _ in range(4000)}), dtype=np.int64)
    got = ranges_of(ids, int(ids[0]), int(ids[-1]), 8)
    assert got[0] == 0 and got[-1] == 7 and (np.diff(got) >= 0).all()
    assert np.bincount(got, minlength=8).min() > len(ids) / 8 / 2
