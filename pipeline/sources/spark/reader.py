"""Reading sources on Spark: splits packed into tasks, each split's records as Arrow batches (``RECORD_SCHEMA``).

Ingest reads its ``sources`` here and decontamination its ``decontaminate.references``, under the same
record rules; ``key`` is the config key of the list, which errors name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial

import pyarrow as pa
from pyspark import Broadcast
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pipeline.config import IngestConfig, SourceConfig
from pipeline.sources.batches import RECORD_SCHEMA, records_to_batches
from pipeline.sources.records import RecordRules, record_rules
from pipeline.sources.splits import Split, pack_splits, plan_splits, source_files
from pipeline.spark.task_numbers import task_numbers
from pipeline.spark.worker_task import per_task

SPLIT_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("format", pa.string()),
        ("url", pa.string()),
        ("rel_path", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("compression", pa.string()),
        ("size", pa.int64()),
    ]
)


def read_sources(
    spark: SparkSession,
    sources: Sequence[SourceConfig],
    ingest: IngestConfig,
    key: str,
    want: str = "all",
    keep_fields: bool = True,
) -> DataFrame:
    """The records of every file of ``sources`` (the list at config key ``key``), read with ``ingest``'s
    settings; ``keep_fields=False`` keeps no metadata field."""
    listings = source_files(sources, key, ingest.include_hidden)
    tasks = pack_splits(plan_splits(sources, ingest, listings), ingest)
    return read_records(spark, tasks, record_rules(sources, ingest, keep_fields), want)


def read_records(
    spark: SparkSession,
    tasks: list[list[Split]],
    rules: dict[str, RecordRules],
    want: str,
    on_reject: Callable[[Split], None] | None = None,
) -> DataFrame:
    """The records (``RECORD_SCHEMA``) of the splits of ``tasks``, one Spark task per inner list; ``want`` and
    ``on_reject`` as in :func:`~pipeline.sources.batches.records_to_batches`."""
    groups = spark.sparkContext.broadcast([[s.as_row() for s in task] for task in tasks])
    body = partial(_task_records, groups, rules, want, on_reject)
    return task_numbers(spark, len(tasks)).mapInArrow(per_task(body), spark_schema(RECORD_SCHEMA))


def _task_records(
    groups: Broadcast,
    rules: dict[str, RecordRules],
    want: str,
    on_reject: Callable[[Split], None] | None,
    numbers: Iterable[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: the records of the split groups whose numbers arrive."""
    splits = (
        pa.RecordBatch.from_pylist(groups.value[i], schema=SPLIT_SCHEMA)
        for batch in numbers
        for i in batch.column(0).to_pylist()
    )
    return records_to_batches(splits, rules, want, on_reject)


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark struct type of an Arrow schema of int64 and string columns (``mapInArrow``'s output type)."""
    mapping = {pa.int64(): LongType(), pa.string(): StringType()}
    return StructType([StructField(f.name, mapping[f.type], True) for f in schema])
