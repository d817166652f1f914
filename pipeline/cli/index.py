"""``python -m pipeline index describe|compact PATH`` (docs/dedup_index.md, Maintenance)."""

from __future__ import annotations

from pipeline.dedup.index.head import DedupIndexError, read_head
from pipeline.dedup.index.spark.commit import compact, describe, index_problems
from pipeline.spark.session import start_session


def index_main(action: str, path: str) -> int:
    """Print an index's runs, documents and size, or compact its generations (starts Spark).

    ``describe`` prints what it finds, then fails (exit code 1, one line) when the index cannot be read as
    HEAD says: a generation HEAD maps a run to is missing."""
    if action == "describe":
        print(describe(path))
        head, _ = read_head(path)
        problems = index_problems(path, head) if head is not None else []
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise DedupIndexError(f"dedup index {path} is damaged: {problems[0]}{more}")
        return 0
    spark = start_session("pipeline-index-compact", None, {})
    try:
        print(compact(spark, path))
    finally:
        spark.stop()
    return 0
