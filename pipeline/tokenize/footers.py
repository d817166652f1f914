"""Each source's smallest and largest doc_id from the Parquet footers of the table, without reading the rows.

The tokenize stage needs, per source, the smallest and largest ``doc_id`` to place its equal-width ranges
(:func:`pipeline.tokenize.batches.ranges_of`). Parquet writers (parquet-mr in Spark, pyarrow in the direct tables)
store each row group's min and max of every column in the file's footer, so when every row group holds one source
only, the footers give the same two numbers exactly. :func:`spans_from_footers` (over footers the stage has read to
plan its map tasks) and :func:`footer_spans` (reading a local table's footers) answer only then; anything they
cannot vouch for returns None and the stage reads the two columns instead
(:func:`pipeline.tokenize.stage.doc_id_spans`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pipeline import storage
from pipeline.storage.parquet_footers import table_footers

if TYPE_CHECKING:
    import pyarrow.parquet as pq


def footer_spans(table: str, sources: Iterable[str]) -> dict[str, tuple[int, int]] | None:
    """{source: (smallest doc_id, largest)} of the sources with rows in the Parquet table directory ``table``, read
    from the footers of the files Spark reads there (:mod:`pipeline.storage.parquet_footers`); None unless the answer
    is exact: a local table of Parquet files holding both columns, whose every non-empty row group holds a single
    source of ``sources`` (no nulls) and carries doc_id statistics (int64, no nulls)."""
    if not storage.is_local(table):  # one footer read per file from the driver: only where that costs nothing
        return None
    if not os.path.isdir(storage.local_path(table)):
        return None
    try:
        footers = table_footers(table)
    except (OSError, ValueError):  # a file that is no Parquet file (pyarrow's ArrowInvalid is a ValueError)
        return None
    return spans_from_footers(footers, sources)


def spans_from_footers(
    footers: Iterable[tuple[object, pq.FileMetaData]], sources: Iterable[str]
) -> dict[str, tuple[int, int]] | None:
    """:func:`footer_spans` from footers already read (``(file, metadata)`` pairs, :func:`table_footers`): None
    unless every data file holds both columns and every non-empty row group a single source of ``sources`` (no
    nulls) with int64 doc_id statistics."""
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
