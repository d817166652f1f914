"""Histogram of the exact Jaccard of every verified candidate pair: what the LSH S-curve let through."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

BINS = 20  # bins of width 1/BINS over [0, 1]; a Jaccard of exactly 1.0 counts in the last bin


def candidate_jaccard_histogram(edges: DataFrame) -> list[int]:
    """Counts of candidate pairs per Jaccard bin ``[i/BINS, (i+1)/BINS)``, before the threshold filter."""
    binned = edges.where(F.col("jaccard").isNotNull()).select(
        F.least(F.floor(F.col("jaccard") * BINS), F.lit(BINS - 1)).cast("int").alias("bin"))
    counts = [0] * BINS
    for row in binned.groupBy("bin").count().collect():
        counts[row["bin"]] = row["count"]
    return counts
