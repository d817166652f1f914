"""Reading a finished run's tables on the driver with pyarrow (no Spark): for the report, explain and sample.

Every reader takes the run directory (local, gs:// or s3://) and returns plain Python rows. The
documents table is large: it is only read with a ``doc_id`` filter, for the few texts shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pipeline import storage
from pipeline.errors import PipelineError
from pipeline.stage_api.layout import DOCUMENTS, EDGES, FILTERED


class RunNotFoundError(PipelineError, FileNotFoundError):
    """The directory holds no finished stage output the command needs."""


def _dataset(run: str, table: str):
    import pyarrow.dataset as ds

    path = storage.join(run, *table.split("/"))
    if not storage.exists(path):
        raise RunNotFoundError(f"{path} not found: is {run!r} a run directory whose stages finished?")
    fs, inner = storage.resolve(path)
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


def iter_rows(run: str, table: str, columns: list[str]) -> Iterator[list[dict]]:
    """The rows of a table batch by batch, files in name order (memory stays bounded on large runs)."""
    for batch in iter_batches(run, table, columns):
        yield batch.to_pylist()


def iter_batches(run: str, table: str, columns: list[str]) -> Iterator:
    """The table's pyarrow record batches, files in name order (the order :func:`iter_rows` gives)."""
    dataset = _dataset(run, table)
    for fragment in sorted(dataset.get_fragments(), key=lambda f: f.path):
        yield from fragment.to_batches(columns=columns)


def count_rows(run: str, table: str) -> int:
    """How many rows the table holds (from the files' metadata)."""
    return int(_dataset(run, table).count_rows())


def dedup_input(run: str) -> str:
    """The table of the texts dedup compared: the filter stage's documents when the run filtered, else ingest's."""
    return FILTERED if has_table(run, FILTERED) else DOCUMENTS


def rows_by_doc_id(run: str, table: str, doc_ids: Iterable[int], columns: list[str] | None = None) -> dict[int, dict]:
    """``{doc_id: row}`` for the given ids (absent ids are missing from the result).

    Two passes per row group: its ``doc_id`` column first, the other columns (the texts) only of the
    row groups that hold a wanted id, so a few texts never mean reading every text of a large run.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = pa.array(sorted({int(i) for i in doc_ids}), pa.int64())
    if len(ids) == 0:
        return {}
    dataset = _dataset(run, table)
    wanted = None if columns is None else [c for c in columns if c in dataset.schema.names]
    found: dict[int, dict] = {}
    for fragment in dataset.get_fragments():
        for group in fragment.split_by_row_group():
            if not pc.any(pc.is_in(group.to_table(columns=["doc_id"]).column("doc_id"), value_set=ids)).as_py():
                continue
            for row in group.to_table(columns=wanted, filter=pc.field("doc_id").isin(ids)).to_pylist():
                found[row["doc_id"]] = row
    return found


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
