"""A Spark SQL setting changed for the jobs of one block, then restored."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

ARROW_BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"  # rows per Arrow batch handed to a Python step


@contextmanager
def temporary_conf(spark, key: str, value: str) -> Iterator[None]:
    """Run the enclosed jobs with ``key`` set to ``value``, then restore the session's own setting (or unset it).

    Spark reads such settings when a job is planned, so the block must hold the job's run (``collect``,
    ``write``), not only the DataFrame's definition."""
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
