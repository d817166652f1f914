"""Reading sources on Spark: splits packed into tasks, each split's records as Arrow batches (``RECORD_SCHEMA``).

Ingest reads its ``sources`` here and decontamination its ``decontaminate.references``, under the same
record rules; ``key`` is the config key of the list, which errors name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pipeline.config import IngestConfig, SourceConfig
from pipeline.sources.batches import RECORD_SCHEMA, records_to_batches
from pipeline.sources.records import RecordRules, record_rules
from pipeline.sources.splits import Split, pack_splits, plan_splits, source_files
from pipeline.spark.worker_task import per_task

SPLIT_SCHEMA = (
    "source string, format string, url string, rel_path string, start long, end long, compression string, size long"
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
    return task_frame(spark, tasks).mapInArrow(
        per_task(lambda it: records_to_batches(iter(it), rules, want, on_reject)), spark_schema(RECORD_SCHEMA)
    )


def split_frame(spark: SparkSession, splits: list[Split]) -> DataFrame:
    """A DataFrame of ``splits``, exactly one per partition (none for no splits)."""
    return task_frame(spark, [[s] for s in splits])


def task_frame(spark: SparkSession, tasks: list[list[Split]]) -> DataFrame:
    """A DataFrame of the splits of ``tasks``, each inner list exactly one partition (none for no tasks).

    ``repartition(n)`` of n rows deals them round-robin from a random offset per input partition,
    which left some tasks two splits and others none (1 GB in 16 splits: 4 tasks read 128 MB, 4 read
    nothing), so a cluster waited on the doubled tasks; ``parallelize`` of n items in n slices gives
    each slice one."""
    groups = [[s.as_row() for s in task] for task in tasks]
    rows = spark.sparkContext.parallelize(groups, max(1, len(groups))).flatMap(lambda group: group)
    return spark.createDataFrame(rows, SPLIT_SCHEMA)


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark struct type of an Arrow schema of int64 and string columns (``mapInArrow``'s output type)."""
    mapping = {pa.int64(): LongType(), pa.string(): StringType()}
    return StructType([StructField(f.name, mapping[f.type], True) for f in schema])
