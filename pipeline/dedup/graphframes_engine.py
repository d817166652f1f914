"""GraphFrames as the second connected-components engine (SPEC §4 step 5, §11).

GraphFrames' JVM package must be on the driver's and executors' class path; the Python package
``graphframes-py`` alone is not enough. :func:`require_graphframes` checks that before any job runs
and names the artifact to add.
"""

from __future__ import annotations

import logging
import tempfile
from importlib import metadata

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pipeline.dedup.components import (
    DEFAULT_HUB_THRESHOLD,
    cut_lineage,
    hub_split_join,
    normalize_edges,
)
from pipeline.errors import PipelineError

log = logging.getLogger(__name__)

GRAPHFRAMES_CLASS = "org.graphframes.GraphFramePythonAPI"
MIN_VERSION = (0, 10, 1)


class GraphFramesUnavailableError(PipelineError, RuntimeError):
    """The GraphFrames JVM package is missing or too old for ``engine="graphframes"``."""


def graphframes_coordinates(spark: SparkSession) -> str:
    """Maven coordinates of the GraphFrames artifact matching this session's Spark and Scala."""
    major = spark.version.split(".")[0]
    scala = "2.13" if major != "3" else _scala_binary_version(spark) or "2.12"
    return f"io.graphframes:graphframes-spark{major}_{scala}:{_recommended_version()}"


def require_graphframes(spark: SparkSession) -> None:
    """Raise :class:`GraphFramesUnavailableError` unless GraphFrames >= 0.10.1 is on the class path.

    Call it when the dedup stage starts, before any Spark job. On Spark Connect there is no driver
    JVM to inspect here; the server's plugin configuration is then trusted.
    """
    jvm = _jvm(spark)
    if jvm is None:
        return
    try:
        cls = jvm.Thread.currentThread().getContextClassLoader().loadClass(GRAPHFRAMES_CLASS)
    except Exception as exc:  # py4j wraps the JVM's ClassNotFoundException
        if "ClassNotFoundException" not in str(exc) and "NoClassDefFoundError" not in str(exc):
            raise
        raise GraphFramesUnavailableError(
            _advice(spark, f"the GraphFrames JVM package is not on the class path ({GRAPHFRAMES_CLASS} "
                           "not found)")
        ) from None
    found = cls.getPackage().getImplementationVersion() if cls.getPackage() is not None else None
    if found and _parse_version(found) < MIN_VERSION:
        raise GraphFramesUnavailableError(_advice(spark, f"GraphFrames {found} is on the class path"))


def graphframes_components(
    edges: DataFrame, checkpoint_interval: int = 3, hub_threshold: int = DEFAULT_HUB_THRESHOLD
) -> DataFrame:
    """``(doc_id, component)`` from ``GraphFrame.connectedComponents()``, component = smallest doc_id."""
    from graphframes import GraphFrame

    spark = edges.sparkSession
    require_graphframes(spark)
    ensure_checkpoint_dir(spark)
    clean = normalize_edges(edges).persist()
    vertices = (
        clean.select(F.col("src").alias("id"))
        .unionByName(clean.select(F.col("dst").alias("id")))
        .distinct()
    )
    links = clean.filter(F.col("src") != F.col("dst"))
    found = GraphFrame(vertices, links).connectedComponents(checkpointInterval=checkpoint_interval)
    found = found.select(F.col("id").alias("doc_id"), "component")
    # GraphFrames' ids are its own; relabel each component by its smallest doc_id. The join is keyed
    # by component, so a giant component would land on one task: split it off through a broadcast.
    smallest = found.groupBy("component").agg(
        F.min("doc_id").alias("label"), F.count(F.lit(1)).alias("size")
    )
    labelled = hub_split_join(found, "component", smallest, ["label"], F.col("size") >= hub_threshold)
    result = cut_lineage(labelled.select("doc_id", F.col("label").alias("component")))
    clean.unpersist()
    return result


def ensure_checkpoint_dir(spark: SparkSession) -> str:
    """The checkpoint directory GraphFrames needs; sets a local temp one if none is set.

    The temporary directory only works in local mode: on a cluster set ``sc.setCheckpointDir`` (or
    ``spark.checkpoint.dir``) to shared storage (HDFS, ``gs://``, ``s3://``) first.
    """
    sc = spark.sparkContext
    current = sc.getCheckpointDir()
    if current is not None:
        return current
    path = tempfile.mkdtemp(prefix="graphframes-checkpoints-")
    if not sc.master.startswith("local"):
        log.warning("no checkpoint directory set; using driver-local %s, which executors may not see", path)
    sc.setCheckpointDir(path)
    return sc.getCheckpointDir()


def _advice(spark: SparkSession, problem: str) -> str:
    coords = graphframes_coordinates(spark)
    return (
        f"engine='graphframes' cannot run: {problem}. Add {coords} (Spark {spark.version}; "
        "io.graphframes:graphframes-spark3_2.12 for Spark 3.5 with Scala 2.12 as on Dataproc 2.2/2.3 "
        "and EMR 7, graphframes-spark3_2.13 for Scala 2.13 runtimes, graphframes-spark4_2.13 for "
        "Spark 4), version >= 0.10.1 (0.10.0 could silently return wrong results after a failed "
        f"checkpoint write), e.g. --conf spark.jars.packages={coords}, or --jars with a staged jar on "
        "clusters without internet. Older GraphFrames gave wrong components with AQE on "
        "(spark.sql.adaptive.enabled=true); do not use them, or disable AQE. Or use engine='star', "
        "which needs no JVM package."
    )


def _jvm(spark: SparkSession):
    """The driver JVM gateway view, or None on Spark Connect."""
    try:
        return spark.sparkContext._jvm
    except NotImplementedError:  # Spark Connect
        return None


def _scala_binary_version(spark: SparkSession) -> str | None:
    jvm = _jvm(spark)
    if jvm is None:
        return None
    full = str(jvm.scala.util.Properties.versionNumberString())
    return ".".join(full.split(".")[:2])


def _recommended_version() -> str:
    """The installed graphframes-py version (Python and JVM sides should match), at least 0.10.1."""
    try:
        installed = metadata.version("graphframes-py")
    except metadata.PackageNotFoundError:
        installed = ""
    if installed and _parse_version(installed) >= MIN_VERSION:
        return installed
    return ".".join(map(str, MIN_VERSION))


def _parse_version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("-")[0].split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
