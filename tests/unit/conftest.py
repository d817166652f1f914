"""Unit tests (tests/unit/<package>/): pure, without Spark. A test here that asks for the ``spark`` fixture
or is marked ``spark`` fails before its fixtures are made, and one that starts a SparkContext fails after
it ran: a test that needs Spark goes in tests/spark/<package>/ (CONTRIBUTING.md, Tests)."""

from __future__ import annotations

import sys

import pytest


def spark_use(item: pytest.Item) -> str | None:
    """Why a unit test may not run: it uses the ``spark`` fixture or marker; None when it does not."""
    if "spark" in getattr(item, "fixturenames", ()):
        return "uses the spark fixture"
    if item.get_closest_marker("spark") is not None:
        return "is marked spark"
    return None


def active_spark_context() -> object | None:
    """The SparkContext running in this process, if pyspark is loaded and one runs."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext

    return SparkContext._active_spark_context


def _moved(why: str) -> str:
    return f"a unit test {why}: tests that need a SparkSession go in tests/spark/<package>/ (CONTRIBUTING.md, Tests)"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail a unit test that asks for Spark, before its fixtures start it."""
    why = spark_use(item)
    if why:
        pytest.fail(_moved(why))


@pytest.fixture(autouse=True)
def _unit_tests_start_no_spark():
    """Fail a unit test that started a SparkContext in this process."""
    before = active_spark_context()
    yield
    if before is None and active_spark_context() is not None:
        pytest.fail(_moved("started Spark"))
