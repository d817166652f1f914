"""A Parquet table directory's data files, listed as Spark reads them, and their footers (pyarrow metadata).

Spark's file index (``InMemoryFileIndex``) walks a table directory down, entering no file or
directory whose name starts with ``.``, or with ``_`` unless the name holds ``=`` (a partition directory such as
``_col=1``), or ends with ``._COPYING_`` (a file still being copied); it keeps ``_metadata`` and
``_common_metadata`` (``HadoopFSUtils.shouldFilterOutPathName``). Its scan then reads (``PartitioningAwareFileIndex``):

* only the non-empty files whose own name passes the same rule without that exception (``isDataPath``), so neither
  Parquet summary file nor an empty file is data; any other name is, whatever it ends with (``part-00000`` as much
  as ``part-00000.snappy.parquet``);
* of an unpartitioned table, only the files directly in the directory: a subdirectory without ``=`` in its name
  is listed but not read;
* of a partitioned table (a directory below it named ``column=value``), only the files in partition directories.

:func:`data_files` applies these rules and :func:`table_footers` reads each data file's footer, so whoever plans
from the footers (the tokenize stage's doc_id spans, the spans stage's input size) sees the files Spark's scan
reads (tests/spark/storage/test_parquet_footers_spark.py compares them with the files a Spark scan read).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from pipeline.storage.listing import FileInfo, list_files
from pipeline.storage.paths import is_local, resolve

if TYPE_CHECKING:
    import pyarrow.parquet as pq

COPYING_SUFFIX = "._COPYING_"
SUMMARY_FILES = ("_common_metadata", "_metadata")  # entered by Spark's listing, never read as data
REMOTE_READS = 16  # footers of an object store's table read at once (each is a round trip or two)


def listed_by_spark(name: str) -> bool:
    """Whether Spark's file index keeps a file or directory called ``name`` in a table's listing."""
    left_out = (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith(COPYING_SUFFIX)
    return not left_out or name.startswith(SUMMARY_FILES)


def is_data_name(name: str) -> bool:
    """Whether Spark reads a listed file called ``name`` as data (not a Parquet summary file)."""
    return listed_by_spark(name) and not ((name.startswith("_") and "=" not in name) or name.startswith("."))


def data_files(table: str) -> list[FileInfo]:
    """The data files Spark reads in the table directory ``table`` (local path or URL), sorted by URL (module
    docstring); an empty list when ``table`` does not exist."""
    root = table.rstrip("/") or table
    base = resolve(root)[1]
    found = []
    for info in list_files(root, hidden=True).files:
        parts = posixpath.relpath(resolve(info.url)[1], base).split("/")
        if info.size > 0 and all(listed_by_spark(part) for part in parts[:-1]) and is_data_name(parts[-1]):
            found.append((parts[:-1], info))
    partitioned = [info for folders, info in found if any("=" in folder for folder in folders)]
    return partitioned or [info for folders, info in found if not folders]


def read_footer(url: str) -> pq.FileMetaData:
    """The footer of the Parquet file ``url`` (local path or URL); pyarrow's error (an OSError or ValueError)
    when it is no Parquet file."""
    import pyarrow.parquet as pq

    fs, path = resolve(url)
    with fs.open(path, "rb") as handle:
        return pq.ParquetFile(handle).metadata


def table_footers(table: str) -> list[tuple[FileInfo, pq.FileMetaData]]:
    """Each data file of the table directory ``table`` (:func:`data_files`) with its footer, in URL order (an
    object store's footers are fetched :data:`REMOTE_READS` at a time)."""
    files = data_files(table)
    if len(files) < 2 or is_local(table):
        return [(info, read_footer(info.url)) for info in files]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(REMOTE_READS, len(files))) as pool:
        return list(zip(files, pool.map(read_footer, [info.url for info in files]), strict=True))
