"""Parquet tables on an object store without Hadoop: executors write and read them with pyarrow and fsspec.

Used when Spark's Hadoop has no FileSystem for the run directory's scheme (``direct`` mode of
:mod:`pipeline.spark.tables`; docs/running.md, Cluster and storage).

Writing ``frame`` to ``url`` (the table's directory):

1. the old table is deleted (as Spark's ``overwrite`` does);
2. each task writes its partition as one Parquet file under an attempt-specific name,
   ``_attempts/<job>/part-<partition>-<task attempt id>.parquet``, and returns ``(partition, path)``;
3. the driver gets those rows of the successful attempts only, copies each file to
   ``part-<partition>.parquet`` (server side), deletes ``_attempts/`` and writes ``_SUCCESS`` last.

A failed or retried attempt's file stays under ``_attempts/`` and goes with it: the table holds the
successful attempts' files alone. A partition without rows writes no file; a table without any row gets
one empty file, so its schema can still be read.

Reading: the driver lists the files a Spark scan of the table reads (``parquet_footers.data_files``: hidden and
``_`` names, files still being copied, empty files and an unpartitioned table's subdirectories left out) and reads
the schema from the first one's footer; tasks read the files (one per task) with pyarrow. No Hadoop on either side.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Iterator
from functools import partial

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark import Broadcast
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructField, StructType

from pipeline import storage
from pipeline.errors import PipelineError
from pipeline.spark.task_numbers import task_numbers
from pipeline.spark.worker_task import per_task
from pipeline.storage.parquet_footers import data_files

ATTEMPTS = "_attempts"
SUCCESS = "_SUCCESS"
WRITTEN = "partition int, path string"
_WRITTEN_ARROW = pa.schema([("partition", pa.int32()), ("path", pa.string())])
INJECT_PROPERTY = "pipeline.inject_failure"  # tests: "tables" fails partition 0's first attempt after its write
READ_BATCH_ROWS = 4096  # rows per Arrow batch a reading task yields (documents can be megabytes)


def part_name(partition: int) -> str:
    """The final name of a partition's file in the table directory."""
    return f"part-{partition:05d}.parquet"


def _write_attempt(attempts: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` body writing one partition to ``attempts`` (runs in the task)."""
    from pyspark import TaskContext

    task = TaskContext.get()
    assert task is not None, "a direct table write runs in a Spark task"
    partition, attempt = task.partitionId(), task.taskAttemptId()
    inject = task.getLocalProperty(INJECT_PROPERTY) == "tables" and partition == 0 and task.attemptNumber() == 0
    path = storage.join(attempts, f"part-{partition:05d}-{attempt}.parquet")
    fs, inner = storage.resolve(path)
    rows = 0
    with contextlib.ExitStack() as stack:
        writer = None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if writer is None:
                storage.ensure_parent(path)
                sink = stack.enter_context(fs.open(inner, "wb"))
                writer = stack.enter_context(pq.ParquetWriter(sink, schema))
            writer.write_table(pa.Table.from_batches([batch]).rename_columns(schema.names).cast(schema))
            rows += batch.num_rows
    if inject and rows:
        raise RuntimeError(f"injected failure after writing {path} (pipeline.inject_failure=tables)")
    if rows:
        yield pa.RecordBatch.from_pylist([{"partition": partition, "path": path}], schema=_WRITTEN_ARROW)


def write_direct(frame: DataFrame, url: str) -> int:
    """Write ``frame`` as Parquet files at ``url`` from the executors; the number of part files."""
    schema = to_arrow_schema(frame.schema)
    storage.remove(url)
    attempts = storage.join(url, ATTEMPTS, uuid.uuid4().hex)
    try:
        # by position: mapInArrow names its input columns unquoted, which a dotted name ("c4.sentences") breaks
        safe = frame.toDF(*[f"c{i}" for i in range(len(frame.columns))])
        rows = safe.mapInArrow(per_task(partial(_write_attempt, attempts, schema)), WRITTEN).collect()
        moves = [(r["path"], storage.join(url, part_name(r["partition"]))) for r in sorted(rows)]
        if len({final for _, final in moves}) != len(moves):
            raise PipelineError(f"two successful attempts wrote one partition of {url}")
        _copy_all(moves)
        if not moves:
            _write_empty(storage.join(url, part_name(0)), schema)
    finally:
        storage.remove(storage.join(url, ATTEMPTS), best_effort=True)
    storage.write_bytes(storage.join(url, SUCCESS), b"")
    return max(len(moves), 1)


def _copy_all(moves: list[tuple[str, str]]) -> None:
    """Server-side copies of the attempts' files to their final names (one batched call)."""
    if not moves:
        return
    fs, _ = storage.resolve(moves[0][0])
    fs.copy([storage.resolve(s)[1] for s, _ in moves], [storage.resolve(d)[1] for _, d in moves])


def _write_empty(path: str, schema: pa.Schema) -> None:
    with storage.open_atomic(path) as f:
        pq.write_table(schema.empty_table(), f)


def part_files(url: str) -> list[str]:
    """The table's data files, those a Spark scan of it reads (:func:`pipeline.storage.parquet_footers.data_files`),
    sorted; an error naming the table if none. A partitioned table's partition columns are not read back."""
    storage.resolve(url)[0].invalidate_cache()  # the executors have just written it: no stale listing
    found = [info.url for info in data_files(url)]
    if not found:
        raise PipelineError(f"no Parquet files in table {url}")
    return found


def _read_files(schema: pa.Schema, paths: Broadcast, numbers: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` body reading the files whose numbers arrive (runs in the task)."""
    for batch in numbers:
        for path in (paths.value[i] for i in batch.column(0).to_pylist()):
            fs, inner = storage.resolve(path)
            with fs.open(inner, "rb") as f:
                for got in pq.ParquetFile(f).iter_batches(batch_size=READ_BATCH_ROWS):
                    if got.num_rows:
                        yield from pa.Table.from_batches([got]).cast(schema).to_batches()


def read_direct(spark: SparkSession, url: str) -> DataFrame:
    """The Parquet table at ``url``, its files read by the executors (one file per task)."""
    files = part_files(url)
    fs, first = storage.resolve(files[0])
    with fs.open(first, "rb") as f:
        arrow = pq.read_schema(f)
    schema = StructType([StructField(f.name, f.dataType, True) for f in from_arrow_schema(arrow).fields])
    target = to_arrow_schema(schema)
    paths = spark.sparkContext.broadcast(files)
    return task_numbers(spark, len(files)).mapInArrow(per_task(partial(_read_files, target, paths)), schema)
