"""The GraphFrames engine's guards (docs/dedup.md, Connected components): start-up refusals, version checks, AQE off
while it runs."""

from __future__ import annotations

import sys

import pytest

from pipeline.dedup.spark import graphframes as graphframes_engine
from pipeline.dedup.spark.components import connected_components
from pipeline.dedup.spark.graphframes import (
    AQE_KEY,
    GraphFramesJar,
    GraphFramesUnavailableError,
    check_graphframes_jar,
    graphframes_components,
    require_graphframes,
    scala_from_jar_name,
    version_from_jar_name,
)

LEGACY_JAR = "file:/jars/graphframes-0.8.2-spark3.0-s_2.12.jar"


@pytest.mark.parametrize(
    ("name", "version", "scala"),
    [
        ("file:/work/shared/jars/graphframes-0.8.2-spark3.0-s_2.12.jar", "0.8.2", "2.12"),
        ("file:/root/.ivy2/jars/graphframes_graphframes-0.8.4-spark3.5-s_2.12.jar", "0.8.4", "2.12"),
        ("gs://b/pretrain/jars/graphframes-spark3_2.12-0.10.1.jar", "0.10.1", "2.12"),
        ("file:/root/.ivy2/jars/io.graphframes_graphframes-spark3_2.13-0.10.0.jar", "0.10.0", "2.13"),
        ("file:/opt/graphframes-spark4_2.13-0.11.0-SNAPSHOT.jar", "0.11.0-SNAPSHOT", "2.13"),
        ("file:/databricks/jars/----ws_3_5--a1b2c3.jar", None, None),
    ],
)
def test_version_and_scala_from_published_jar_names(name, version, scala):
    assert version_from_jar_name(name) == version
    assert scala_from_jar_name(name) == scala


@pytest.mark.parametrize("version", ["0.10.0", "0.10.0-rc1"])
def test_graphframes_0_10_0_is_refused_with_the_reason(version):
    jar = GraphFramesJar(f"file:/jars/graphframes-spark3_2.12-{version}.jar", version, io_graphframes_api=True)
    with pytest.raises(GraphFramesUnavailableError) as info:
        check_graphframes_jar(jar, "3.5.9", "2.12")
    message = str(info.value)
    assert f"GraphFrames {version} is on the class path" in message
    assert "failed checkpoint write" in message and ">= 0.10.1" in message
    assert "io.graphframes:graphframes-spark3_2.12:0.10.1" in message


@pytest.mark.parametrize(
    "jar",
    [
        GraphFramesJar(LEGACY_JAR, "0.8.2", io_graphframes_api=False),
        GraphFramesJar("file:/renamed.jar", None, io_graphframes_api=False),  # legacy API: predates 0.10
        GraphFramesJar("file:/jars/graphframes-spark3_2.12-0.10.1.jar", "0.10.1", io_graphframes_api=True),
        GraphFramesJar("file:/jars/graphframes-spark3_2.12-0.11.0.jar", "0.11.0", io_graphframes_api=True),
        GraphFramesJar("file:/jars/graphframes-spark3_2.12-0.9.3.jar", "0.9.3", io_graphframes_api=True),
    ],
)
def test_working_versions_are_accepted(jar):
    check_graphframes_jar(jar, "3.5.9", "2.12")


def test_io_graphframes_without_a_stated_version_is_refused():
    jar = GraphFramesJar("file:/renamed.jar", None, io_graphframes_api=True)
    with pytest.raises(GraphFramesUnavailableError, match="0.10.0 cannot be ruled out"):
        check_graphframes_jar(jar, "3.5.9", "2.12")


def test_jar_for_another_scala_is_refused_naming_the_right_artifact():
    with pytest.raises(GraphFramesUnavailableError) as info:
        check_graphframes_jar(GraphFramesJar(LEGACY_JAR, "0.8.2", False), "4.0.5", "2.13")
    message = str(info.value)
    assert "built for Scala 2.12, this Spark runs Scala 2.13" in message
    assert "io.graphframes:graphframes-spark4_2.13:0.10.1" in message


def test_missing_jar_is_reported_before_any_job(spark, monkeypatch):
    """A class name no jar provides stands in for the missing jar; the shared session is untouched."""
    monkeypatch.setattr(graphframes_engine, "GRAPHFRAMES_CLASS", "org.graphframes.NoSuchGraphFrame")
    sc = spark.sparkContext
    sc.setJobGroup("graphframes-startup-check", "must stay empty")
    try:
        with pytest.raises(GraphFramesUnavailableError) as info:
            connected_components(spark.createDataFrame([(1, 2)], "src long, dst long"), engine="graphframes")
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    assert list(sc.statusTracker().getJobIdsForGroup("graphframes-startup-check")) == []
    message = str(info.value)
    major = spark.version.split(".")[0]
    assert "org.graphframes.NoSuchGraphFrame not found" in message
    assert f"io.graphframes:graphframes-spark{major}_2.1" in message
    assert "graphframes-spark3_2.12" in message and "graphframes-spark3_2.13" in message
    assert "graphframes-spark4_2.13" in message and "graphframes:graphframes:0.8.x-spark3.x-s_2.12" in message
    assert "0.10.1" in message and "spark.sql.adaptive.enabled" in message


def test_shared_jar_is_detected_as_legacy_0_8_2(graphframes_spark):
    jar = require_graphframes(graphframes_spark)
    assert jar.version == "0.8.2" and not jar.io_graphframes_api
    assert jar.location.endswith("graphframes-0.8.2-spark3.0-s_2.12.jar")


def test_broken_version_on_the_class_path_stops_the_engine_before_any_job(graphframes_spark, monkeypatch):
    spark = graphframes_spark
    monkeypatch.setattr(graphframes_engine, "version_from_jar_name", lambda location: "0.10.0")
    sc = spark.sparkContext
    sc.setJobGroup("graphframes-version-check", "must stay empty")
    try:
        with pytest.raises(GraphFramesUnavailableError, match="GraphFrames 0.10.0 is on the class path"):
            graphframes_components(spark.createDataFrame([(1, 2)], "src long, dst long"))
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    assert list(sc.statusTracker().getJobIdsForGroup("graphframes-version-check")) == []


def _sql_executions(spark) -> dict[int, str]:
    """Every SQL execution Spark recorded so far: id -> physical plan description."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    found = (executions.apply(i) for i in range(executions.size()))
    return {int(e.executionId()): str(e.physicalPlanDescription()) for e in found}


def _shuffle_query_is_adaptive(spark) -> bool:
    """Run a query with a shuffle (AQE only wraps such plans) and say whether it was planned adaptively."""
    spark.range(5).groupBy().count().collect()
    executions = _sql_executions(spark)
    return "AdaptiveSparkPlan" in executions[max(executions)]


def test_aqe_is_off_while_graphframes_runs_and_restored_after(graphframes_spark, monkeypatch):
    spark = graphframes_spark
    spark.conf.set(AQE_KEY, "true")
    seen_by_jvm_call: list[str] = []
    real_run = graphframes_engine.run_jvm_connected_components

    def spy(*args, **kwargs):
        seen_by_jvm_call.append(spark.conf.get(AQE_KEY))
        return real_run(*args, **kwargs)

    monkeypatch.setattr(graphframes_engine, "run_jvm_connected_components", spy)
    try:
        assert _shuffle_query_is_adaptive(spark), "AQE is on: otherwise the plan check below would mean nothing"
        first = max(_sql_executions(spark))
        edges = [(1, 2), (2, 3), (3, 4), (10, 11), (12, 12)]
        labels = graphframes_components(spark.createDataFrame(edges, "src long, dst long"))
        engine_plans = [plan for i, plan in _sql_executions(spark).items() if i > first]
        assert spark.conf.get(AQE_KEY) == "true"
        assert _shuffle_query_is_adaptive(spark), "AQE was not restored after the engine"
    finally:
        spark.conf.unset(AQE_KEY)
    assert {r.doc_id: r.component for r in labels.collect()} == {1: 1, 2: 1, 3: 1, 4: 1, 10: 10, 11: 10, 12: 12}
    assert len(engine_plans) >= 5, "GraphFrames ran too few SQL queries to be the real algorithm"
    adaptive = [plan.splitlines()[1] for plan in engine_plans if "AdaptiveSparkPlan" in plan]
    assert adaptive == [], f"{len(adaptive)} of the engine's queries were planned with AQE on"
    assert seen_by_jvm_call == ["false"]
    assert "graphframes" not in sys.modules, "the engine must not need the graphframes Python package"


@pytest.mark.parametrize("before", [None, "true", "false"])
def test_aqe_setting_is_restored_exactly_even_after_an_error(spark, before):
    """Unset stays unset (Spark's default applies again); an explicit value comes back as it was."""
    if before is None:
        spark.conf.unset(AQE_KEY)
    else:
        spark.conf.set(AQE_KEY, before)
    try:
        with pytest.raises(KeyError), graphframes_engine.aqe_disabled(spark):
            assert spark.conf.get(AQE_KEY) == "false"
            raise KeyError("boom")
        assert spark.conf.get(AQE_KEY, None) == before
    finally:
        spark.conf.unset(AQE_KEY)
