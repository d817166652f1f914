"""Spark access to a dedup index's generation tables, native or staged like the run's tables.

When the session's Hadoop has a FileSystem for the index's scheme (always for local paths; ``gs://``
on Dataproc, ``s3://`` on EMR) Spark reads and writes the generation directly. Otherwise (a laptop,
the emulator tests) a generation is written to a local directory and uploaded, and read after being
downloaded to one: the same rule as :mod:`pipeline.objectstore_tables`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from pyspark.sql import DataFrame, SparkSession

from pipeline import storage
from pipeline.dedup_index.head import Head
from pipeline.objectstore_tables import _download, _upload, hadoop_supports

BANDS_DDL = "band int, key long, run string, doc_id long"
DOCS_DDL = "run string, doc_id long, source string, kept boolean, h1 long, h2 long, text string"


def generation_path(index: str, generation: str, table: str = "") -> str:
    parts = ["generations", generation, *([table] if table else [])]
    return storage.join(index, *parts)


def _scratch() -> str:
    path = tempfile.mkdtemp(prefix="pipeline-index-")
    atexit.register(shutil.rmtree, path, True)
    return path


def write_table(spark: SparkSession, frame: DataFrame, url: str) -> None:
    """Write ``frame`` as Parquet at ``url`` (directly, or locally then uploaded)."""
    if hadoop_supports(spark, url):
        frame.write.mode("overwrite").parquet(url)
        return
    local = os.path.join(_scratch(), "table")
    frame.write.mode("overwrite").parquet(local)
    _upload(local, url)


def read_table(spark: SparkSession, url: str, ddl: str) -> DataFrame:
    """The Parquet table at ``url`` (downloaded first when Spark cannot read its scheme)."""
    if not hadoop_supports(spark, url):
        local = os.path.join(_scratch(), "table")
        _download(url, local)
        url = local
    return spark.read.schema(ddl).parquet(url)


def live_tables(spark: SparkSession, index: str, head: Head, exclude_run: str | None) -> tuple[DataFrame, DataFrame]:
    """(bands, docs) of every run HEAD maps to a generation, each read from that generation only."""
    from pyspark.sql import functions as F

    bands = spark.createDataFrame([], BANDS_DDL)
    docs = spark.createDataFrame([], DOCS_DDL)
    for generation, runs in sorted(head.live_generations(exclude_run).items()):
        keep = F.col("run").isin(runs)
        bands = bands.unionByName(read_table(spark, generation_path(index, generation, "bands"), BANDS_DDL).where(keep))
        docs = docs.unionByName(read_table(spark, generation_path(index, generation, "docs"), DOCS_DDL).where(keep))
    return bands, docs


def tree_bytes(url: str) -> int:
    """Total size of the files below ``url``."""
    fs, root = storage.filesystem(url)
    fs.invalidate_cache()
    return int(sum(fs.du(root, total=False).values())) if fs.exists(root) else 0
