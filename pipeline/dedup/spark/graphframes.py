"""GraphFrames as the second connected-components engine (docs/dedup.md, Connected components).

GraphFrames is driven through its JVM API over py4j (``GraphFrame`` built from the DataFrames' Java
handles, then ``connectedComponents().setAlgorithm("graphframes").setCheckpointInterval(n).run()``),
not through the ``graphframes`` Python package: that package's newer releases call setters the
legacy jars lack, and the legacy jars' Python module does not know the newer JVM classes. Both
artifact lineages therefore work: the legacy ``graphframes:graphframes:0.8.x-spark3.x-s_2.12`` and
``io.graphframes:graphframes-spark3_2.12`` (with its ``graphframes-graphx`` companion) >= 0.10.1.

Safety (docs/dedup.md, Connected components): :func:`require_graphframes` runs before any Spark job and
refuses a missing jar, a jar built for another Scala version, and GraphFrames 0.10.0 (silent wrong results
after a failed checkpoint write), naming the artifact to add. While the engine runs, AQE is off (older
releases gave wrong components with it on) and a checkpoint directory is set; AQE is restored afterwards.
"""

from __future__ import annotations

import logging
import re
import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pipeline.dedup.spark.edges import (
    DEFAULT_HUB_THRESHOLD,
    cut_lineage,
    hub_split_join,
    normalize_edges,
)
from pipeline.errors import PipelineError
from pipeline.spark.temporary_conf import temporary_conf

log = logging.getLogger(__name__)

GRAPHFRAMES_CLASS = "org.graphframes.GraphFrame"
COMPONENTS_CLASS = "org.graphframes.lib.ConnectedComponents"
# A setter of the io.graphframes releases (which graphframes-py >= 0.10 calls); the legacy jars lack it.
IO_GRAPHFRAMES_METHOD = "setUseLabelsAsComponents"
RECOMMENDED_VERSION = "0.10.1"
BROKEN_VERSIONS: dict[tuple[int, ...], str] = {
    (0, 10, 0): "0.10.0 can silently return wrong components after a failed checkpoint write",
}
AQE_KEY = "spark.sql.adaptive.enabled"


class GraphFramesUnavailableError(PipelineError, RuntimeError):
    """The GraphFrames JVM package is missing, unusable here, or a known-broken version."""


@dataclass(frozen=True)
class GraphFramesJar:
    """What the driver's class path holds: where GraphFrames comes from and which release it is."""

    location: str | None  # the jar (code source) the GraphFrame class was loaded from
    version: str | None  # from the jar's manifest, else from its file name; None when neither says
    io_graphframes_api: bool  # True for the io.graphframes lineage (>= 0.9), False for the legacy jars

    @property
    def lineage(self) -> str:
        return "io.graphframes" if self.io_graphframes_api else "graphframes:graphframes (legacy)"


def graphframes_coordinates(spark_version: str, scala: str | None) -> str:
    """Maven coordinates of the io.graphframes artifact for this Spark major and Scala version."""
    major = spark_version.split(".")[0]
    scala = scala or ("2.12" if major == "3" else "2.13")
    return f"io.graphframes:graphframes-spark{major}_{scala}:{RECOMMENDED_VERSION}"


def require_graphframes(spark: SparkSession) -> GraphFramesJar:
    """Return the GraphFrames jar on the class path, or raise :class:`GraphFramesUnavailableError`.

    Call it when the dedup stage starts: it inspects classes and the jar's manifest only, so it
    runs no Spark job.
    """
    jvm = _jvm(spark)
    if jvm is None:
        raise GraphFramesUnavailableError(
            "engine='graphframes' drives GraphFrames' JVM API and needs a classic Spark session with a "
            "driver JVM; Spark Connect has none. Use engine='star' (no JVM package needed)."
        )
    scala = _scala_binary_version(jvm)
    loader = jvm.Thread.currentThread().getContextClassLoader()
    try:
        graph_class = loader.loadClass(GRAPHFRAMES_CLASS)
        components_class = loader.loadClass(COMPONENTS_CLASS)
    except Exception as exc:  # py4j wraps the JVM's ClassNotFoundException
        if "ClassNotFoundException" not in str(exc) and "NoClassDefFoundError" not in str(exc):
            raise
        raise GraphFramesUnavailableError(
            advice(
                spark.version,
                scala,
                f"the GraphFrames JVM package is not on the class path ({GRAPHFRAMES_CLASS} not found)",
            )
        ) from None
    location = _code_source(graph_class)
    package = graph_class.getPackage()
    manifest_version = package.getImplementationVersion() if package is not None else None
    jar = GraphFramesJar(
        location=location,
        version=manifest_version or version_from_jar_name(location),
        io_graphframes_api=any(m.getName() == IO_GRAPHFRAMES_METHOD for m in components_class.getMethods()),
    )
    check_graphframes_jar(jar, spark.version, scala)
    return jar


def check_graphframes_jar(jar: GraphFramesJar, spark_version: str, scala: str | None) -> None:
    """Refuse a jar built for another Scala version, a known-broken release, or an unknown io.graphframes one."""
    jar_scala = scala_from_jar_name(jar.location)
    if jar_scala and scala and jar_scala != scala:
        raise GraphFramesUnavailableError(
            advice(
                spark_version, scala, f"{jar.location} is built for Scala {jar_scala}, this Spark runs Scala {scala}"
            )
        )
    if jar.version is not None:
        problem = BROKEN_VERSIONS.get(parse_version(jar.version)[:3])
        if problem:
            raise GraphFramesUnavailableError(
                advice(
                    spark_version, scala, f"GraphFrames {jar.version} is on the class path ({jar.location}); {problem}"
                )
            )
    elif jar.io_graphframes_api:
        raise GraphFramesUnavailableError(
            advice(
                spark_version,
                scala,
                f"the io.graphframes jar at {jar.location} states no version (no Implementation-Version in its "
                "manifest, none in its file name), so 0.10.0 cannot be ruled out; use the released jar as "
                "published on Maven Central",
            )
        )


def advice(spark_version: str, scala: str | None, problem: str) -> str:
    """The refusal message: what is wrong and which artifact to add for this Spark and Scala."""
    coords = graphframes_coordinates(spark_version, scala)
    return (
        f"engine='graphframes' cannot run: {problem}. Add {coords} (Spark {spark_version}, Scala "
        f"{scala or 'unknown'}) with its graphframes-graphx companion of the same version: "
        "io.graphframes:graphframes-spark3_2.12 for Spark 3.5 with Scala 2.12 as on Dataproc 2.2/2.3 and "
        "EMR 7, graphframes-spark3_2.13 for Scala 2.13 runtimes (Dataproc Serverless 2.2), "
        "graphframes-spark4_2.13 for Spark 4; version >= 0.10.1, never 0.10.0 (silent wrong results "
        "after a failed checkpoint write). The legacy graphframes:graphframes:0.8.x-spark3.x-s_2.12 jars also "
        f"work on Spark 3 with Scala 2.12. E.g. --conf spark.jars.packages={coords}, or --jars with "
        "staged jars on clusters without internet. The pipeline turns AQE (spark.sql.adaptive.enabled) off "
        "while GraphFrames runs, as older releases gave wrong components with it on. Or use "
        "engine='star', which needs no JVM package."
    )


def graphframes_components(
    edges: DataFrame, checkpoint_interval: int = 3, hub_threshold: int = DEFAULT_HUB_THRESHOLD
) -> DataFrame:
    """``(doc_id, component)`` from GraphFrames' ``connectedComponents()``, component = smallest doc_id.

    Every Spark job of the engine, the final relabelling included, runs with AQE off; the result
    is materialized (checkpointed) before AQE is restored.
    """
    spark = edges.sparkSession
    jar = require_graphframes(spark)
    ensure_checkpoint_dir(spark)
    with aqe_disabled(spark):
        clean = normalize_edges(edges).persist()  # GraphFrames gave wrong results on uncached inputs
        vertices = (
            clean.select(F.col("src").alias("id"))
            .unionByName(clean.select(F.col("dst").alias("id")))
            .distinct()
            .persist()
        )
        found = None
        try:
            links = clean.filter(F.col("src") != F.col("dst"))
            found = run_jvm_connected_components(vertices, links, checkpoint_interval)
            found = found.select(F.col("id").alias("doc_id"), "component").persist()
            # GraphFrames' component ids are its own; relabel each component by its smallest doc_id. The
            # join is keyed by component, so a giant component would land on one task: split it off.
            smallest = found.groupBy("component").agg(F.min("doc_id").alias("label"), F.count(F.lit(1)).alias("size"))
            labelled = hub_split_join(found, "component", smallest, ["label"], F.col("size") >= hub_threshold)
            result = cut_lineage(labelled.select("doc_id", F.col("label").alias("component")))
        finally:
            for frame in (found, vertices, clean):
                if frame is not None:
                    frame.unpersist()
    log.info("graphframes components done (%s %s from %s)", jar.lineage, jar.version or "", jar.location)
    return result


def run_jvm_connected_components(vertices: DataFrame, links: DataFrame, checkpoint_interval: int) -> DataFrame:
    """``GraphFrame(vertices, links).connectedComponents()`` through the JVM API: ``(id, component)``."""
    spark = vertices.sparkSession
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # a classic (non-Connect) session, checked by require_graphframes
    jgraph = jvm.org.graphframes.GraphFrame.apply(vertices._jdf, links._jdf)
    jresult = jgraph.connectedComponents().setAlgorithm("graphframes").setCheckpointInterval(checkpoint_interval).run()
    return DataFrame(jresult, spark)


def aqe_disabled(spark: SparkSession) -> AbstractContextManager[None]:
    """Set ``spark.sql.adaptive.enabled=false`` for the block, then restore what was there (or unset it)."""
    return temporary_conf(spark, AQE_KEY, "false")


def ensure_checkpoint_dir(spark: SparkSession) -> str:
    """The checkpoint directory GraphFrames needs; sets a local temp one if none is set.

    The temporary directory only works in local mode: on a cluster set ``sc.setCheckpointDir`` (the
    pipeline uses ``dedup.checkpoint_dir`` or the run directory) to shared storage first.
    """
    sc = spark.sparkContext
    current = sc.getCheckpointDir()
    if current is not None:
        return current
    path = tempfile.mkdtemp(prefix="graphframes-checkpoints-")
    if not (sc.master or "").startswith("local"):
        log.warning("no checkpoint directory set; using driver-local %s, which executors may not see", path)
    sc.setCheckpointDir(path)
    return sc.getCheckpointDir() or path


def version_from_jar_name(location: str | None) -> str | None:
    """The release in a GraphFrames jar's file name (``graphframes-0.8.2-spark3.0-s_2.12.jar``,
    ``graphframes-spark3_2.12-0.10.1.jar``, ivy's ``graphframes_graphframes-0.8.2-...``), or None."""
    name = (location or "").rstrip("/").rsplit("/", 1)[-1]
    if "graphframes" not in name.lower():
        return None
    match = re.search(r"-(\d+\.\d+\.\d+(?:-(?:rc|RC|M|SNAPSHOT)\w*)?)(?=[-.])", name)
    return match.group(1) if match else None


def scala_from_jar_name(location: str | None) -> str | None:
    """The Scala binary version a jar's file name states (``s_2.12``, ``spark3_2.13``), or None."""
    name = (location or "").rstrip("/").rsplit("/", 1)[-1]
    match = re.search(r"(?:s_|spark\d_)(2\.1[0-3])", name)
    return match.group(1) if match else None


def parse_version(text: str) -> tuple[int, ...]:
    """``"0.10.1"`` -> ``(0, 10, 1)``; missing or non-numeric parts count as 0."""
    parts = []
    for piece in text.split("-")[0].split(".")[:3]:
        digits = re.match(r"\d*", piece).group(0)  # type: ignore[union-attr]  # \d* always matches
        parts.append(int(digits) if digits else 0)
    return tuple(parts + [0] * (3 - len(parts)))


def _jvm(spark: SparkSession):
    """The driver JVM gateway view, or None on Spark Connect."""
    try:
        return spark.sparkContext._jvm
    except NotImplementedError:  # Spark Connect (PySparkNotImplementedError)
        return None


def _scala_binary_version(jvm) -> str:
    full = str(jvm.scala.util.Properties.versionNumberString())
    return ".".join(full.split(".")[:2])


def _code_source(java_class) -> str | None:
    """Where a JVM class was loaded from (its jar), or None when the JVM does not say."""
    source = java_class.getProtectionDomain().getCodeSource()
    return str(source.getLocation().toString()) if source is not None else None
