"""Reading a finished run's tables on the driver with pyarrow (no Spark): for the report, explain and sample.

Every reader takes the run directory (local, gs:// or s3://) and returns plain Python rows. The
documents table is large: it is only read with a ``doc_id`` filter, for the few texts shown.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipeline import storage
from pipeline.errors import PipelineError

DOCUMENTS = "documents"
REJECTS = "rejects"
EDGES = "dedup/edges"
COMPONENTS = "dedup/components"
SURVIVORS = "dedup/survivors"


class RunNotFoundError(PipelineError, FileNotFoundError):
    """The directory holds no finished stage output the command needs."""


def _dataset(run: str, table: str):
    import pyarrow.dataset as ds

    path = storage.join(run, *table.split("/"))
    if not storage.exists(path):
        raise RunNotFoundError(f"{path} not found: is {run!r} a run directory whose stages finished?")
    fs, inner = storage.filesystem(path)
    return ds.dataset(inner, filesystem=fs, format="parquet", exclude_invalid_files=True)


def has_table(run: str, table: str) -> bool:
    """True when ``run`` holds ``table`` (e.g. no ``dedup/edges`` when dedup was switched off)."""
    return storage.exists(storage.join(run, *table.split("/")))


def read_rows(run: str, table: str, columns: list[str] | None = None, where=None) -> list[dict]:
    """Rows of a table (optionally only ``columns`` and rows matching the pyarrow expression ``where``)."""
    dataset = _dataset(run, table)
    names = dataset.schema.names
    wanted = None if columns is None else [c for c in columns if c in names]
    return dataset.to_table(columns=wanted, filter=where).to_pylist()


def rows_by_doc_id(run: str, table: str, doc_ids: Iterable[int], columns: list[str] | None = None) -> dict[int, dict]:
    """``{doc_id: row}`` for the given ids (absent ids are missing from the result)."""
    import pyarrow.compute as pc

    ids = sorted({int(i) for i in doc_ids})
    if not ids:
        return {}
    import pyarrow as pa

    rows = read_rows(run, table, columns, pc.field("doc_id").isin(pa.array(ids, pa.int64())))
    return {row["doc_id"]: row for row in rows}


def edges_touching(run: str, doc_ids: Iterable[int]) -> list[dict]:
    """Verified edges (src, dst, jaccard) with an end in ``doc_ids``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = pa.array(sorted({int(i) for i in doc_ids}), pa.int64())
    if not has_table(run, EDGES) or len(ids) == 0:
        return []
    return read_rows(run, EDGES, None, pc.field("src").isin(ids) | pc.field("dst").isin(ids))


def excerpt(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, with an ellipsis when cut."""
    return text if len(text) <= limit else text[:limit].rstrip() + " …"
