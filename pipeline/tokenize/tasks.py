"""What the tokenize stage's Python tasks run (no Spark import): the ``mapInArrow`` bodies of its three jobs.

The stage (:mod:`pipeline.tokenize.stage`) runs each job as :func:`~pipeline.spark.task_numbers.task_numbers`
tasks: a body gets Arrow batches of work numbers, looks its work up in a broadcast (anything with ``.value``), reads
and writes files itself and yields Arrow batches of result rows. What a body needs to know of the Spark task attempt
running it comes from a function the stage passes in (:class:`RunningTask`), so nothing here asks Spark for anything:

* :func:`span_rows` (the spans job): each source's smallest and largest doc_id in the task's row groups;
* :func:`map_task` (the map job): the task's row groups encoded into its bucket file
  (:func:`~pipeline.tokenize.batches.bucket_documents`);
* :func:`reduce_task` (the reduce job): one (source, range)'s shard written from its buckets
  (:func:`~pipeline.tokenize.batches.write_range_shard`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from pipeline import storage
from pipeline.tokenize.batches import (
    BUCKETS_SCHEMA,
    COLUMNS,
    SUMMARY_SCHEMA,
    Buckets,
    TaskAttempt,
    bucket_documents,
    write_range_shard,
)
from pipeline.tokenize.footers import Unit
from pipeline.tokenize.shards import shard_dir, tmp_dir

# Rows per Arrow batch a map task reads and encodes at once: fewer rows cost the encoder less CPU, and a batch of
# long documents stays small in a worker (docs/benchmarks.md, Tokenize stage constants).
BATCH_ROWS = 1000
SPANS_SCHEMA = pa.schema([("source", pa.string()), ("lo", pa.int64()), ("hi", pa.int64())])  # a spans task's rows
INJECTED_STAGE = "tokenize"  # the value of the failure-injection property that makes a reduce attempt fail


@dataclass(frozen=True)
class RunningTask:
    """The task attempt running a body, as the stage reads it from Spark inside the task."""

    attempt: int  # the attempt number of this task (0 first)
    attempt_id: int  # unique per attempt within the Spark application
    inject_failure: str | None = None  # the stage named by the failure-injection local property (tests), if any


def read_unit(unit: Unit, columns: Iterable[str] = COLUMNS) -> Iterator[pa.RecordBatch]:
    """The ``columns`` of a map task's row groups, :data:`BATCH_ROWS` rows per batch (local files read directly,
    others through fsspec)."""
    import pyarrow.parquet as pq

    for url, groups in unit:
        if storage.is_local(url):  # memory-mapped, decoded in this thread: the least CPU (t47h)
            file = pq.ParquetFile(storage.local_path(url), memory_map=True)
            yield from file.iter_batches(
                batch_size=BATCH_ROWS, row_groups=list(groups), columns=list(columns), use_threads=False
            )
            continue
        fs, inner = storage.resolve(url)
        with fs.open(inner, "rb") as f:
            file = pq.ParquetFile(f)
            yield from file.iter_batches(batch_size=BATCH_ROWS, row_groups=list(groups), columns=list(columns))


def span_rows(units: Any, numbers: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The spans job's body: each source's smallest and largest doc_id in the task's row groups
    (``units.value[number]``), rows of :data:`SPANS_SCHEMA`."""
    for batch in numbers:
        for number in batch.column(0).to_pylist():
            spans: dict[str, tuple[int, int]] = {}
            for got in read_unit(units.value[number], ("doc_id", "source")):
                table = pa.Table.from_batches([got]).group_by("source").aggregate([("doc_id", "min_max")])
                for row in table.to_pylist():
                    if row["source"] is None or row["doc_id_min_max"]["min"] is None:
                        continue
                    low, high = row["doc_id_min_max"]["min"], row["doc_id_min_max"]["max"]
                    was = spans.get(row["source"], (low, high))
                    spans[row["source"]] = (min(was[0], low), max(was[1], high))
            rows = [{"source": s, "lo": lo, "hi": hi} for s, (lo, hi) in spans.items()]
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=SPANS_SCHEMA)


def map_task(
    running: Callable[[], RunningTask],
    units: Any,
    tok: Any,
    plan: Buckets,
    directory: str,
    numbers: Iterable[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """The map job's body: encode the task's row groups (``units.value[number]``) with ``tok.value`` into its
    attempt's bucket file under ``directory``; a row per bucket written (:data:`BUCKETS_SCHEMA`)."""
    task = running()
    for batch in numbers:
        for number in batch.column(0).to_pylist():
            path = storage.join(directory, f"unit-{number:05d}.attempt-{task.attempt}-{task.attempt_id}")
            rows = bucket_documents(read_unit(units.value[number]), plan, tok.value, path + ".arrow")
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=BUCKETS_SCHEMA)


def reduce_task(
    running: Callable[[], RunningTask], work: Any, run_dir: str, dtype_name: str, numbers: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The reduce job's body: write the shard of the task's (source, range) (``work.value[number]``: the source, the
    partition, its buckets) from its buckets; a row per shard (:data:`SUMMARY_SCHEMA`). Attempt 0 of partition 0
    fails half-way when the failure-injection property names this stage."""
    task = running()
    for batch in numbers:
        for number in batch.column(0).to_pylist():
            source, part, parts = work.value[number]
            inject = task.inject_failure == INJECTED_STAGE and part == 0 and task.attempt == 0
            me = TaskAttempt(part, task.attempt, task.attempt_id, inject)
            out, tmp = shard_dir(run_dir, source), tmp_dir(run_dir, source)
            row = write_range_shard(parts, me, source, out, tmp, dtype_name)
            yield pa.RecordBatch.from_pylist([row], schema=SUMMARY_SCHEMA)
