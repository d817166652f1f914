"""spans_from_footers: each source's doc_id span from a table's Parquet footers (as the stage reads them, with
table_footers), exact or None (checked against pyarrow.compute)."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipeline.storage.parquet_footers import table_footers
from pipeline.tokenize.footers import spans_from_footers

SCHEMA = pa.schema([("doc_id", pa.int64()), ("source", pa.string()), ("text", pa.string())])


def _rows(source: str, n: int, rng: random.Random) -> list[dict]:
    return [{"doc_id": rng.randint(-(2**63), 2**63 - 1), "source": source, "text": "t"} for _ in range(n)]


def _spans_of_table(table: Path | str, sources: list[str]) -> dict[str, tuple[int, int]] | None:
    """What the stage gets: the footers of the files a Spark scan reads, then the spans from them."""
    return spans_from_footers(table_footers(str(table)), sources)


def _spans_by_compute(table: pa.Table) -> dict[str, tuple[int, int]]:
    """The oracle: min and max of doc_id per source over the rows themselves."""
    out = {}
    for source in set(table.column("source").to_pylist()) - {None}:
        ids = table.filter(pc.equal(table.column("source"), source)).column("doc_id")
        low, high = pc.min_max(ids).values()
        out[source] = (low.as_py(), high.as_py())
    return out


def test_single_source_row_groups_give_the_exact_spans(tmp_path: Path) -> None:
    rng = random.Random(3)
    parts = [pa.Table.from_pylist(_rows(s, n, rng), SCHEMA) for s, n in (("web", 50), ("books", 30), ("web", 7))]
    for i, part in enumerate(parts):
        pq.write_table(part, tmp_path / f"part-{i:05d}.parquet", row_group_size=8)
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / ".part-00000.parquet.crc").write_text("x")
    (tmp_path / "part-00011._COPYING_").write_text("half a file")  # Spark's listing skips it too
    pq.write_table(pa.Table.from_pylist([], SCHEMA), tmp_path / "part-00009.parquet")  # no row group with rows
    extra = pa.Table.from_pylist(_rows("books", 5, rng), SCHEMA)
    pq.write_table(extra, tmp_path / "part-00010")  # Spark reads a file whatever its name ends with
    spans = _spans_of_table(str(tmp_path), ["web", "books", "empty"])
    assert spans == _spans_by_compute(pa.concat_tables([*parts, extra]))
    assert set(spans) == {"web", "books"}


def test_an_empty_table_has_no_spans(tmp_path: Path) -> None:
    (tmp_path / "_SUCCESS").write_text("")
    assert _spans_of_table(str(tmp_path), ["web"]) == {}


@pytest.mark.parametrize(
    "case", ["mixed_group", "null_source", "null_doc_id", "unknown_source", "no_statistics", "int32_doc_id"]
)
def test_footers_that_cannot_tell_exactly_give_none(tmp_path: Path, case: str) -> None:
    rng = random.Random(5)
    rows = _rows("web", 10, rng)
    schema, options = SCHEMA, {}
    if case == "mixed_group":
        rows += _rows("books", 3, rng)
    elif case == "null_source":
        rows[4]["source"] = None
    elif case == "null_doc_id":
        rows[4]["doc_id"] = None
    elif case == "unknown_source":
        rows = _rows("other", 4, rng)
    elif case == "no_statistics":
        options = {"write_statistics": False}
    else:
        schema = pa.schema([("doc_id", pa.int32()), ("source", pa.string()), ("text", pa.string())])
        rows = [dict(r, doc_id=i) for i, r in enumerate(rows)]
    pq.write_table(pa.Table.from_pylist(rows, schema), tmp_path / "part-00000.parquet", **options)
    assert _spans_of_table(str(tmp_path), ["web", "books"]) is None


@pytest.mark.parametrize("case", ["subdirectory", "missing_column"])
def test_files_without_both_columns_give_none(tmp_path: Path, case: str) -> None:
    rng = random.Random(9)
    table = pa.Table.from_pylist(_rows("web", 10, rng), SCHEMA)
    pq.write_table(table, tmp_path / "part-00000.parquet")
    if case == "subdirectory":  # a table partitioned by source: its files hold no source column
        (tmp_path / "source=web").mkdir()
        pq.write_table(table.drop_columns(["source"]), tmp_path / "source=web" / "part-00001.parquet")
    else:
        pq.write_table(table.drop_columns(["source"]), tmp_path / "part-00002.parquet")
    assert _spans_of_table(tmp_path, ["web"]) is None
