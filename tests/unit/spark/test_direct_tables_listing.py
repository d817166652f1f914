"""pipeline.spark.direct_tables.part_files: the direct reader reads the files a Spark scan of the table reads
(pipeline.storage.parquet_footers.data_files; the names below are the ones
tests/spark/storage/test_parquet_footers_spark.py checks against Spark's own scan), locally and on an fsspec store."""

from __future__ import annotations

from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.errors import PipelineError
from pipeline.spark.direct_tables import part_files

TABLE = pa.table({"doc_id": pa.array([1, 2], pa.int64())})
READ = ["part-00000-1f.c000.snappy.parquet", "part-00001"]  # a Spark scan reads both: any non-hidden name is data
LEFT_OUT = [
    "sub/part-00002.parquet",  # an unpartitioned table's subdirectory: listed by Spark, not read
    "_SUCCESS",
    ".part-00000-1f.c000.snappy.parquet.crc",
    "_metadata",
    "part-00003.parquet._COPYING_",
    "_temporary/0/part-00004.parquet",
    "part-00007.parquet",  # empty (zero bytes): not data
]


def _table_dir(root: Path, names: list[str]) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if name == "part-00007.parquet":
            (root / name).write_bytes(b"")
        else:
            pq.write_table(TABLE, root / name)


def test_the_direct_reader_reads_what_a_spark_scan_reads(tmp_path: Path) -> None:
    _table_dir(tmp_path, READ + LEFT_OUT)
    assert part_files(str(tmp_path)) == [str(tmp_path / name) for name in READ]
    memory = fsspec.filesystem("memory")
    try:
        for name in READ + LEFT_OUT:
            memory.pipe(f"/direct-listing/{name}", (tmp_path / name).read_bytes())
        assert part_files("memory://direct-listing/") == [f"memory:///direct-listing/{name}" for name in READ]
    finally:
        memory.rm("/direct-listing", recursive=True)


def test_a_table_without_data_files_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    _table_dir(tmp_path / "t", ["_SUCCESS", "sub/part-00002.parquet", "part-00007.parquet"])
    with pytest.raises(PipelineError, match=r"^no Parquet files in table .*/t$"):
        part_files(str(tmp_path / "t"))
