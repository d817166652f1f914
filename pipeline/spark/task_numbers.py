"""A DataFrame of task numbers, exactly one per partition: how a stage gives each task its own list of work."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession


def task_numbers(spark: SparkSession, tasks: int) -> DataFrame:
    """``id`` 0 .. tasks - 1, exactly one per partition (one empty partition for no tasks).

    The work itself (splits, file names) goes to the tasks in a broadcast that each task indexes with its
    number. ``repartition(n)`` of n rows deals them round-robin from a random offset per input partition,
    which left some tasks two items and others none (1 GB in 16 splits: 4 tasks read 128 MB, 4 read
    nothing); ``range`` over n slices gives each slice one number, and, unlike ``parallelize`` of the work,
    needs no Python RDD: no second Python worker per core, and no conversion of pickled rows on the driver.
    """
    return spark.range(0, tasks, 1, max(1, tasks))
