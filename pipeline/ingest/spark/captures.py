"""The latest capture of each URL (docs/bad_input.md, URL rules): of the web archive pages of a run that share
a URL, the one with the latest ``WARC-Date`` is kept (a tie: the smallest doc_id), the others are removed as
``older_capture`` and listed in ``older_captures/``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

REASON = "older_capture"
OLDER_COLUMNS = ["doc_id", "source", "file", "position", "url", "warc_date", "kept_doc_id", "kept_warc_date", "excerpt"]
EXCERPT_CHARS = 200  # of the removed capture's text, for explain and sample


def _capture_time(column: str) -> Column:
    """A WARC-Date (ISO 8601: ``2024-03-01T08:30:00Z``, with fractions of a second or an offset) as a timestamp;
    null when it is not one (``try_cast``: no error under ANSI mode either)."""
    return F.expr(f"try_cast({column} AS TIMESTAMP)")


def older_captures(documents: DataFrame, web_sources: list[str]) -> DataFrame:
    """The documents of ``web_sources`` whose URL another of the run's documents holds with a later capture time
    (or the same time and a smaller doc_id), with the kept capture's doc_id and date. A document without a URL (or
    with an empty one) takes no part; one without a readable date takes part with its URL and sorts as the oldest."""
    pages = (
        documents.where(F.col("source").isin(web_sources))
        .select(
            "doc_id",
            "source",
            "file",
            "position",
            F.get_json_object("meta", "$.url").alias("url"),
            F.get_json_object("meta", "$.warc_date").alias("warc_date"),
            F.substring("text", 1, EXCERPT_CHARS).alias("excerpt"),
        )
        .where(F.col("url").isNotNull() & (F.trim(F.col("url")) != ""))
        .withColumn("captured", _capture_time("warc_date"))
    )
    latest_first = Window.partitionBy("url").orderBy(F.col("captured").desc_nulls_last(), F.col("doc_id").asc())
    ranked = pages.withColumn("rank", F.row_number().over(latest_first))
    ranked = ranked.withColumn("kept_doc_id", F.first("doc_id").over(latest_first))
    ranked = ranked.withColumn("kept_warc_date", F.first("warc_date").over(latest_first))
    return ranked.where(F.col("rank") > 1).select(*OLDER_COLUMNS)


def without(documents: DataFrame, removed: DataFrame) -> DataFrame:
    """``documents`` less the rows whose doc_id is in ``removed``."""
    return documents.join(removed.select("doc_id"), "doc_id", "left_anti")
