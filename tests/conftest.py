"""Shared test fixtures: one local SparkSession for the whole run, and the ../shared fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cluster_runs import cluster_zip, local_reference_run, standalone_config  # noqa: F401  (spark-submit)
from tests.storage_fixtures import gcs_emulator, s3_emulator  # noqa: F401  (gs:// and s3:// emulators)

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_FIXTURES = REPO_ROOT.parent / "shared" / "fixtures"


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """Directory with GPT-2's vocab/merges and real texts; skips when ../shared is absent."""
    if not (SHARED_FIXTURES / "gpt2_vocab.json").is_file():
        pytest.skip(f"../shared/fixtures not found at {SHARED_FIXTURES} (only present beside a CI clone)")
    return SHARED_FIXTURES


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local[2,3] SparkSession for every Spark test: 2 threads, up to 3 attempts per task (failure injection)."""
    from pipeline.spark_session import build_session

    checkpoints = tmp_path_factory.mktemp("spark-checkpoints")
    session = build_session(
        "pipeline-tests",
        master="local[2,3]",
        settings={
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "2",
            "spark.driver.memory": "2g",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
        },
    )
    session.sparkContext.setCheckpointDir(str(checkpoints))
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def pytest_collection_modifyitems(config, items) -> None:
    """Every test that uses the ``spark`` fixture (directly or through another fixture) is marked ``spark``,
    so ``-m spark`` selects all Spark-touching tests (CI runs them on Spark 4 too)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) and item.get_closest_marker("spark") is None:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(autouse=True)
def _unmarked_tests_start_no_spark(request):
    """Fail a test that starts a SparkContext in this process without the ``spark`` marker."""
    before = _active_spark_context()
    yield
    if request.node.get_closest_marker("spark") is None and before is None and _active_spark_context() is not None:
        pytest.fail("this test started Spark but is not marked `spark` (use the `spark` fixture or the marker)")


def _active_spark_context():
    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext

    return SparkContext._active_spark_context
