"""What the tokenize stage learns from the documents table's Parquet footers before reading a row.

The driver reads every data file's footer once (:func:`pipeline.storage.parquet_footers.table_footers`: the files
Spark's scan reads) and plans from them:

* :func:`plan_units`: the map tasks' work, runs of consecutive row groups of one file (a :data:`Unit` each);
* :func:`spans_from_footers`: per source, the smallest and largest ``doc_id``, which place its equal-width ranges
  (:func:`pipeline.tokenize.batches.ranges_of`). Parquet writers (parquet-mr in Spark, pyarrow in the direct
  tables) store each row group's min and max of every column in the file's footer, so when every row group holds
  one source only, the footers give the same two numbers exactly. It answers only then; anything it cannot vouch
  for returns None and the stage reads the two columns instead (:func:`pipeline.tokenize.stage.doc_id_spans`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pipeline.errors import PipelineError
from pipeline.tokenize.batches import COLUMNS

if TYPE_CHECKING:
    import pyarrow.parquet as pq

# Row groups per map task: about a quarter of the table's bytes per core, so the cores finish together, within these
# bounds (uncompressed bytes, from the footers)
UNIT_BYTES = (1 << 20, 128 << 20)

Unit = tuple[tuple[str, tuple[int, ...]], ...]  # (file URL, its row groups) read by one map task


def plan_units(footers, sources: Iterable[str], parallelism: int) -> list[Unit]:
    """The map tasks' work: runs of consecutive row groups of one file, about a quarter of the table's bytes per
    core each (within :data:`UNIT_BYTES`); row groups without rows, or whose statistics show a single source that
    is not configured, are left out. An error names a file without the columns the stage reads."""
    known = set(sources)
    groups = []
    for info, meta in footers:
        names = [meta.schema.column(i).path for i in range(meta.num_columns)]
        missing = [c for c in COLUMNS if c not in names]
        if missing:
            raise PipelineError(f"tokenize: {info.url} has no column {', '.join(missing)}")
        at_source = names.index("source")
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            if group.num_rows == 0:
                continue
            stats = group.column(at_source).statistics
            if stats is not None and stats.has_min_max and stats.has_null_count and stats.null_count == 0:
                if stats.min == stats.max and stats.min not in known:
                    continue
            groups.append((info.url, g, group.total_byte_size))
    total = sum(size for _, _, size in groups)
    target = min(max(total // (4 * max(1, parallelism)), UNIT_BYTES[0]), UNIT_BYTES[1])
    units: list[Unit] = []
    run: list[int] = []
    size, url = 0, None
    for file, g, bytes_ in groups:
        if run and (file != url or size >= target):
            units.append(((url, tuple(run)),))  # type: ignore[arg-type]
            run, size = [], 0
        url = file
        run.append(g)
        size += bytes_
    if run:
        units.append(((url, tuple(run)),))  # type: ignore[arg-type]
    return units


def spans_from_footers(
    footers: Iterable[tuple[object, pq.FileMetaData]], sources: Iterable[str]
) -> dict[str, tuple[int, int]] | None:
    """{source: (smallest doc_id, largest)} of the sources with rows, from footers already read (``(file,
    metadata)`` pairs, :func:`~pipeline.storage.parquet_footers.table_footers`); None unless the answer is exact:
    every data file holds both columns and every non-empty row group a single source of ``sources`` (no nulls) with
    int64 doc_id statistics (no nulls)."""
    known = set(sources)
    spans: dict[str, tuple[int, int]] = {}
    for _, meta in footers:
        names = [meta.schema.column(i).path for i in range(meta.num_columns)]
        if "doc_id" not in names or "source" not in names:
            return None
        at_id, at_source = names.index("doc_id"), names.index("source")
        if meta.schema.column(at_id).physical_type != "INT64":
            return None
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            if group.num_rows == 0:
                continue
            ids, src = group.column(at_id).statistics, group.column(at_source).statistics
            if ids is None or src is None or not (ids.has_min_max and src.has_min_max):
                return None
            if not (ids.has_null_count and src.has_null_count):
                return None
            if ids.null_count != 0 or src.null_count != 0 or src.min != src.max or src.min not in known:
                return None
            low, high = spans.get(src.min, (ids.min, ids.max))
            spans[src.min] = (min(low, ids.min), max(high, ids.max))
    return {name: (int(low), int(high)) for name, (low, high) in spans.items()}
