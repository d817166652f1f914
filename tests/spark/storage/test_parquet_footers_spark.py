"""pipeline.storage.parquet_footers.data_files against Spark itself: the files a scan of ``spark.read.parquet(table)``
read rows from (``input_file_name``) are the data files it lists: hidden files and directories, Parquet summary
files, files still being copied, empty files and an unpartitioned table's subdirectories left out alike."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from pipeline.storage.parquet_footers import data_files

pytestmark = pytest.mark.spark  # run on Spark 4 too: the rule is Spark's file index, which could change

TABLE = pa.table({"doc_id": pa.array([1, 2, 3], pa.int64()), "text": ["a", "bb", "ccc"]})
FLAT = [
    "part-00000-1f.c000.snappy.parquet",
    "part-00001",
    "sub/part-00002.parquet",
    "_metadata_dir/part-00006.parquet",
    "_SUCCESS",
    ".part-00000-1f.c000.snappy.parquet.crc",
    "_metadata",
    "_common_metadata",
    "part-00003.parquet._COPYING_",
    "_temporary/0/_temporary/attempt_1/part-00004.parquet",
    ".staging/part-00005.parquet",
    "sub/_SUCCESS",
    "part-00007.parquet",  # empty (written below)
]
PARTITIONED = [
    "part-00009.parquet",  # beside partition directories: not read
    "_col=1/part-00000.parquet",
    "_col=2/part-00001",
    "_col=2/sub/part-00002",
    "_col=2/.part-00001.crc",
    "_col=3/_SUCCESS",
    "_SUCCESS",
]


@pytest.mark.parametrize("names", [FLAT, PARTITIONED], ids=["flat", "partitioned"])
def test_data_files_are_what_spark_reads(spark, tmp_path: Path, names: list[str]) -> None:
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".crc"):
            (tmp_path / name).write_bytes(b"crc")
        elif name == "part-00007.parquet":
            (tmp_path / name).write_bytes(b"")
        else:
            pq.write_table(TABLE, tmp_path / name)
    rows = spark.read.parquet(str(tmp_path)).select(F.input_file_name().alias("file")).distinct().collect()
    read = sorted(unquote(urlparse(row["file"]).path) for row in rows)
    assert read, "Spark read nothing"
    assert [f.url for f in data_files(str(tmp_path))] == read
