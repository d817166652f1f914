"""Spark access to a dedup index's generation tables (docs/dedup_index.md, Layout).

Reads and writes go through :func:`pipeline.spark.tables.write_table_at` / ``read_table_at``: natively
when the session's Hadoop has a FileSystem for the index's scheme (local paths; ``gs://`` on Dataproc,
``s3://`` on EMR), else written and read by the executors with pyarrow and fsspec, as the run's own tables are
(:mod:`pipeline.spark.direct_tables`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from pipeline import storage
from pipeline.dedup.index.head import Head
from pipeline.spark.tables import read_table_at

BANDS_DDL = "band int, key long, run string, doc_id long"
DOCS_DDL = "run string, doc_id long, source string, kept boolean, h1 long, h2 long, text string"


def generation_path(index: str, generation: str, table: str = "") -> str:
    """Where a generation (or one of its tables, ``bands`` or ``docs``) lives in the index."""
    parts = ["generations", generation, *([table] if table else [])]
    return storage.join(index, *parts)


def live_tables(spark: SparkSession, index: str, head: Head, runs: list[str] | None) -> tuple[DataFrame, DataFrame]:
    """(bands, docs) of ``runs`` (None: every run HEAD maps to a generation), each read from its generation only."""
    from pyspark.sql import functions as F

    bands = spark.createDataFrame([], BANDS_DDL)
    docs = spark.createDataFrame([], DOCS_DDL)
    for generation, held in sorted(head.live_generations(runs).items()):
        keep = F.col("run").isin(held)
        bands = bands.unionByName(
            read_table_at(spark, generation_path(index, generation, "bands"), BANDS_DDL).where(keep)
        )
        docs = docs.unionByName(read_table_at(spark, generation_path(index, generation, "docs"), DOCS_DDL).where(keep))
    return bands, docs


def tree_bytes(url: str) -> int:
    """Total size of the files below ``url``."""
    fs, root = storage.resolve(url)
    fs.invalidate_cache()
    return int(sum(fs.du(root, total=False).values())) if fs.exists(root) else 0


def generation_dirs(index: str) -> list[str]:
    """The generation ids present under ``generations/`` (published or not), sorted."""
    fs, root = storage.resolve(storage.join(index, "generations"))
    fs.invalidate_cache()
    if not fs.exists(root):
        return []
    return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(root, detail=False))
