"""Where Spark reads and writes the run's Parquet tables (``documents/``, ``rejects/``, ``dedup/*``).

Every other file of a run goes through fsspec in Python. Stages read and write tables only through
:meth:`TableStore.read` / :meth:`TableStore.write` (``ctx.read_table`` / ``ctx.write_table``), which use
one mechanism, chosen once per run and logged (logger ``pipeline.tables``):

* **native**: the session's Hadoop has a FileSystem for the run directory's scheme (local paths
  always; ``gs://`` on Dataproc through the GCS connector; ``s3://`` on EMR through EMRFS;
  ``s3a://`` with hadoop-aws). Spark writes and reads the table's directory itself
  (``DataFrameWriter.parquet`` in overwrite mode, ``DataFrameReader.parquet``). The fast path on a cluster.
* **direct**: no Hadoop FileSystem for the scheme (a laptop, a standalone cluster, the emulator tests
  writing to ``gs://``/``s3://``). The executors write and read the Parquet files themselves with
  pyarrow and fsspec, with a commit that survives task retries (:mod:`pipeline.spark.direct_tables`).
  Nothing passes through the driver's disk, so it works on any master. The driver's store settings
  (endpoint and credential variables, :data:`STORE_ENV`) are passed to the Python tasks.

The Spark checkpoint directory follows the same rule: when the run directory is not Hadoop-visible,
checkpoints go to a local directory on a local master, and on another master none is set (the
components' rounds then cut their lineage with local checkpoints).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from typing import Any

from pipeline import storage
from pipeline.spark.direct_tables import read_direct, write_direct

log = logging.getLogger("pipeline.tables")
# Row groups of natively written tables (parquet-mr counts their compressed pages), unless the Hadoop conf sets
# parquet.block.size. Spark splits a file only between row groups: with parquet-mr's 128 MB, a table of a few
# files of tens of MB is read by as many tasks as files, and two cores wait on the largest.
ROW_GROUP_BYTES = 8 << 20
# what fsspec's gcsfs and s3fs read from the environment: endpoints, emulator switches, credentials
STORE_ENV = (
    "STORAGE_EMULATOR_HOST",
    "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_PROFILE",
)


def hadoop_supports(spark, path: str) -> bool:
    """Whether the session's Hadoop configuration has a FileSystem for ``path``'s scheme."""
    if storage.is_local(path):
        return True
    scheme = path.split("://", 1)[0]
    jvm = getattr(spark, "_jvm", None) or getattr(getattr(spark, "sparkContext", None), "_jvm", None)
    if jvm is None:  # Spark Connect: no JVM here; the cluster owns its connectors
        return True
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, conf)
        return True
    except Exception:  # UnsupportedFileSystemException, ClassNotFoundException
        return False


def forward_store_env(spark) -> list[str]:
    """Pass the driver's :data:`STORE_ENV` variables to the session's Python tasks; the names passed.

    ``SparkContext.environment`` travels with every Python function created afterwards, to executors on
    any master, so tasks reach the store the driver reaches."""
    env = spark.sparkContext.environment
    passed = [name for name in STORE_ENV if name in os.environ]
    for name in passed:
        env[name] = os.environ[name]
    return passed


class TableStore:
    """The run's Parquet tables: where they are, and reading and writing them in this run's mode."""

    def __init__(self, run_dir: str, spark_getter) -> None:
        self.run_dir = run_dir
        self._spark = spark_getter
        self._mode: str | None = None
        self._work: str | None = None
        self._written: dict[str, Any] = {}  # table directory -> the schema a read of what this store wrote infers

    @property
    def mode(self) -> str:
        """``native`` or ``direct`` (decided on first use, then logged)."""
        if self._mode is None:
            spark = self._spark()
            self._mode = "native" if hadoop_supports(spark, self.run_dir) else "direct"
            if self._mode == "direct":
                passed = forward_store_env(spark)
                log.warning(
                    "tables: direct (no Hadoop FileSystem for %s; executors write and read Parquet there with "
                    "pyarrow and fsspec; store settings passed to the tasks: %s)",
                    self.run_dir,
                    ", ".join(passed) or "none",
                )
            else:
                log.info("tables: native (Spark reads and writes Parquet in %s)", self.run_dir)
        return self._mode

    def path(self, *parts: str) -> str:
        """The table ``parts``'s directory in the run directory (no I/O)."""
        return storage.join(self.run_dir, *parts)

    def write(self, frame, *parts: str) -> None:
        """Write ``frame`` as the table ``parts``, replacing it."""
        path = self.path(*parts)
        self._written.pop(path, None)
        if self.mode == "native":
            writer = frame.write.mode("overwrite")
            if self._spark().sparkContext._jsc.hadoopConfiguration().get("parquet.block.size") is None:
                writer = writer.option("parquet.block.size", ROW_GROUP_BYTES)
            writer.parquet(path)
            self._written[path] = as_read(frame.schema)
        else:
            write_direct(frame, path)

    def read(self, *parts: str):
        """The table ``parts`` as a DataFrame.

        A table this store wrote is read with its known schema: Spark infers a Parquet table's schema
        with a job of its own (footers read in parallel), a job per read otherwise."""
        path = self.path(*parts)
        if self.mode == "native":
            known = self._written.get(path)
            reader = self._spark().read if known is None else self._spark().read.schema(known)
            return reader.parquet(path)
        return read_direct(self._spark(), path)

    def checkpoint_dir(self, wanted: str) -> str | None:
        """``wanted`` when Hadoop can write there, else a local directory on a local master, else None (logged)."""
        spark = self._spark()
        if hadoop_supports(spark, wanted):
            return wanted
        if not spark.sparkContext.master.startswith("local"):
            log.warning("checkpoints: %s is not Hadoop-visible in this session; none set (local checkpoints)", wanted)
            return None
        if self._work is None:
            self._work = tempfile.mkdtemp(prefix="pipeline-checkpoints-")
            atexit.register(shutil.rmtree, self._work, True)
        log.warning("checkpoints: %s is not Hadoop-visible in this session; using %s", wanted, self._work)
        return self._work


def as_read(data_type):
    """``data_type`` as Spark infers it when reading the Parquet it wrote: every field, element and value
    nullable (names, types and field metadata kept)."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    if isinstance(data_type, StructType):
        return StructType([StructField(f.name, as_read(f.dataType), True, f.metadata) for f in data_type.fields])
    if isinstance(data_type, ArrayType):
        return ArrayType(as_read(data_type.elementType), True)
    if isinstance(data_type, MapType):
        return MapType(as_read(data_type.keyType), as_read(data_type.valueType), True)
    return data_type


def write_table_at(spark, frame, url: str) -> None:
    """Write ``frame`` as Parquet at ``url``, a location outside the run directory (e.g. a dedup index).

    The same rule as the run's tables: natively when Spark's Hadoop can write ``url``, else directly from the
    executors (:mod:`pipeline.spark.direct_tables`).
    """
    if hadoop_supports(spark, url):
        frame.write.mode("overwrite").parquet(url)
        return
    forward_store_env(spark)
    write_direct(frame, url)


def read_table_at(spark, url: str, ddl: str):
    """The Parquet table at ``url`` with schema ``ddl`` (read by the executors when Spark cannot read its scheme)."""
    if hadoop_supports(spark, url):
        return spark.read.schema(ddl).parquet(url)
    forward_store_env(spark)
    from pyspark.sql import functions as F

    fields = spark.createDataFrame([], ddl).schema.fields
    return read_direct(spark, url).select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in fields])
