"""``python -m pipeline index describe|compact PATH`` (docs/dedup_index.md, Maintenance)."""

from __future__ import annotations

from pipeline.dedup.index.spark.commit import compact, describe
from pipeline.spark.session import start_session


def index_main(action: str, path: str) -> int:
    """Print an index's runs, documents and size, or compact its generations (starts Spark)."""
    if action == "describe":
        print(describe(path))
        return 0
    spark = start_session("pipeline-index-compact", None, {})
    try:
        print(compact(spark, path))
    finally:
        spark.stop()
    return 0
