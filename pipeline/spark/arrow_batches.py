"""How many rows Spark puts in each Arrow batch it hands a Python step, set for one step's jobs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

ARROW_BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"


@contextmanager
def arrow_batch_rows(spark, rows: int) -> Iterator[None]:
    """Run the enclosed jobs with ``rows`` rows per Arrow batch, then restore the session's own setting.

    Spark reads the setting when a job is planned, so it must hold while the job is run (``collect``,
    ``write``), not only while the DataFrame is defined."""
    before = spark.conf.get(ARROW_BATCH_ROWS, None)
    spark.conf.set(ARROW_BATCH_ROWS, str(rows))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(ARROW_BATCH_ROWS)
        else:
            spark.conf.set(ARROW_BATCH_ROWS, before)
