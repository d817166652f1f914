"""pipeline.storage.parquet_footers: a table directory's data files as Spark's file index lists them
(``HadoopFSUtils.shouldFilterOutPathName`` for every name, ``PartitioningAwareFileIndex.isDataPath`` for the file's
own; tests/spark/storage/test_parquet_footers_spark.py checks the same tree against Spark's ``inputFiles``), and
their footers."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.storage.parquet_footers import data_files, table_footers

TABLE = pa.table({"doc_id": pa.array([1, 2, 3], pa.int64()), "text": ["a", "bb", "ccc"]})
READ = ["part-00000-1f.c000.snappy.parquet", "part-00001"]  # what a Spark scan reads as data
LEFT_OUT = [
    "sub/part-00002.parquet",  # listed by Spark but not read: an unpartitioned table's files are its directory's
    "_SUCCESS",
    ".part-00000-1f.c000.snappy.parquet.crc",
    "_metadata",  # listed by Spark (Parquet summary files) but not data
    "_common_metadata",
    "part-00003.parquet._COPYING_",
    "_temporary/0/_temporary/attempt_1/part-00004.parquet",
    ".staging/part-00005.parquet",
    "sub/_SUCCESS",
]


def make_table_dir(root: Path, names: list[str]) -> None:
    """Write a small Parquet file under each of ``names`` (relative to ``root``; ``.crc`` names get a few bytes)."""
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".crc"):
            (root / name).write_bytes(b"crc")
        else:
            pq.write_table(TABLE, root / name)


def test_the_data_files_are_the_ones_sparks_file_index_reads(tmp_path: Path) -> None:
    make_table_dir(tmp_path, READ + LEFT_OUT)
    assert [Path(f.url).relative_to(tmp_path).as_posix() for f in data_files(str(tmp_path))] == READ
    assert data_files(str(tmp_path) + "/") == data_files(str(tmp_path))


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("_col=1/part-00000.parquet", True),  # a partition directory: "=" keeps a leading "_"
        ("_col/part-00000.parquet", False),
        ("part-0._COPYING_", False),
        ("_metadata", False),
        ("_metadata_dir/part-00000.parquet", False),  # listed (its name starts with _metadata), yet not a partition
        ("._col=1/part-00000.parquet", False),
        ("col=1/sub/part-00000.parquet", True),
    ],
)
def test_sparks_name_rule_at_its_edges(tmp_path: Path, name: str, data: bool) -> None:
    make_table_dir(tmp_path, [name])
    assert [Path(f.url).relative_to(tmp_path).as_posix() for f in data_files(str(tmp_path))] == ([name] if data else [])


def test_a_partitioned_table_is_read_from_its_partition_directories_only(tmp_path: Path) -> None:
    make_table_dir(tmp_path, ["part-00009.parquet", "col=1/part-00000.parquet", "col=2/part-00001", "col=2/_SUCCESS"])
    assert [Path(f.url).relative_to(tmp_path).as_posix() for f in data_files(str(tmp_path))] == [
        "col=1/part-00000.parquet",
        "col=2/part-00001",
    ]


def test_an_empty_file_is_not_data_but_a_file_without_rows_is(tmp_path: Path) -> None:
    (tmp_path / "part-00000.parquet").write_bytes(b"")
    pq.write_table(TABLE.slice(0, 0), tmp_path / "part-00001.parquet")
    assert [Path(f.url).name for f in data_files(str(tmp_path))] == ["part-00001.parquet"]


def test_a_missing_table_has_no_data_files(tmp_path: Path) -> None:
    assert data_files(str(tmp_path / "absent")) == []


def test_footers_are_read_locally_and_from_an_object_store(tmp_path: Path) -> None:
    import fsspec

    make_table_dir(tmp_path, READ + LEFT_OUT)
    local = table_footers(str(tmp_path))
    assert [meta.num_rows for _, meta in local] == [3, 3]
    memory = fsspec.filesystem("memory")
    for name in READ + LEFT_OUT:
        memory.pipe(f"/footers-table/{name}", (tmp_path / name).read_bytes())
    remote = table_footers("memory://footers-table")
    assert [info.url.split("/footers-table/", 1)[1] for info, _ in remote] == READ
    assert [meta.to_dict() for _, meta in remote] == [meta.to_dict() for _, meta in local]
    memory.rm("/footers-table", recursive=True)
