"""Edge-table plumbing both connected-components engines use (Spark DataFrames).

Normalising an edge list, the hub-aware join, and cutting a plan's lineage (persist + re-root,
checkpoints). The engines: :mod:`pipeline.dedup.spark.components` (large-star / small-star, and the
engine choice) and :mod:`pipeline.dedup.spark.graphframes`.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

DEFAULT_HUB_THRESHOLD = 10_000


def normalize_edges(edges: DataFrame) -> DataFrame:
    """Distinct ``(src, dst)`` with ``src >= dst`` as longs; self loops kept, null ends dropped."""
    a, b = F.col("src").cast("long"), F.col("dst").cast("long")
    return (
        edges.select(a.alias("a"), b.alias("b"))
        .dropna()
        .select(F.greatest("a", "b").alias("src"), F.least("a", "b").alias("dst"))
        .distinct()
    )


def hub_split_join(big: DataFrame, key: str, table: DataFrame, values: list[str], is_hub: Column | None) -> DataFrame:
    """Inner join ``big`` (many rows per key) with ``table`` (one row per key), adding ``values``.

    With ``is_hub`` (a condition on ``table``), rows of ``big`` whose key is a hub take their values
    from a broadcast of the hub rows and stay in their partitions; only the other rows are shuffled
    to the join with ``table``, so no task receives a hub's rows.
    """
    if is_hub is None:
        return big.join(table.select(key, *values), on=key, how="inner")
    tagged = [F.col(v).alias(f"__hub_{v}") for v in values]
    hubs = table.filter(is_hub).select(key, *tagged, F.lit(True).alias("__hub"))
    marked = big.join(F.broadcast(hubs), on=key, how="left")
    via_hubs = marked.filter(F.col("__hub").isNotNull()).select(
        *big.columns, *[F.col(f"__hub_{v}").alias(v) for v in values]
    )
    rest = marked.filter(F.col("__hub").isNull()).select(*big.columns)
    via_shuffle = rest.join(table.select(key, *values), on=key, how="inner")
    return via_hubs.unionByName(via_shuffle.select(*big.columns, *values))


def freeze(df: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Persist ``df``; return ``(leaf, persisted)``, ``leaf`` reading the persisted rows as a one-node plan.

    Each step joins the edges with an aggregate of themselves, so a DataFrame built on the previous
    step holds its plan several times: plans grow exponentially with the steps (round 3 of a 10^4
    path ran the driver out of heap while printing the plan). The leaf keeps the RDD lineage, so a
    lost cached block is recomputed, unlike ``localCheckpoint()``; ``cut_lineage`` truncates it
    every ``checkpoint_interval`` rounds.
    """
    kept = df.persist()
    jdf = getattr(kept, "_jdf", None)
    if jdf is None:  # Spark Connect has no JVM handle: fall back to a (lineage-free) local checkpoint
        return kept.localCheckpoint(eager=False), kept
    session = kept.sparkSession
    leaf = session._jsparkSession.createDataFrame(jdf.rdd(), jdf.schema())
    return type(kept)(leaf, session), kept


def cut_lineage(df: DataFrame) -> DataFrame:
    """Materialize ``df`` and cut its lineage: reliable checkpoint if a directory is set, else local."""
    if checkpoint_dir(df) is not None:
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def checkpoint_dir(df: DataFrame) -> str | None:
    """The SparkContext's checkpoint directory, or None (also on Spark Connect, which has no context)."""
    try:
        return df.sparkSession.sparkContext.getCheckpointDir()
    except NotImplementedError:  # Spark Connect: PySparkNotImplementedError
        return None


def clear_checkpoints(spark) -> int:
    """Delete the files under the SparkContext's checkpoint directory; returns how many entries went.

    Call it once the checkpointed DataFrames are no longer needed (after dedup's outputs are written),
    so reliable checkpoints do not pile up in the run directory run after run.
    """
    try:
        directory = spark.sparkContext.getCheckpointDir()
    except NotImplementedError:  # Spark Connect
        return 0
    if not directory:
        return 0
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(directory)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(path):
        return 0
    entries = fs.listStatus(path)
    for status in entries:
        fs.delete(status.getPath(), True)
    return len(entries)
