"""Shared test fixtures: one local SparkSession for the whole run, and the ../shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

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
