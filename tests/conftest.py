"""Shared test fixtures: one local SparkSession for the whole run, and the ../shared fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The numba kernels run from the first call in every test, in this process, its Spark workers and the
# subprocesses that inherit it, whatever the input's size: the tests compare them with the Python paths and
# the oracles on small inputs. Production's default (the first 2 MB of each kernel's input on the Python path,
# pipeline/numba_backend.py) is tested where it matters, with this variable removed (test_numba_first_use.py).
os.environ.setdefault("PIPELINE_NUMBA_AFTER", "0")

from tests.cluster_runs import cluster_zip, local_reference_run, standalone_config  # noqa: F401  (spark-submit)
from tests.oracles import missing_tool, not_applicable
from tests.sample_runs import sample_run  # noqa: F401  (the sample's run, made once)
from tests.skip_gate import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401  (CI: no skips)
from tests.storage_fixtures import gcs_emulator, s3_emulator  # noqa: F401  (gs:// and s3:// emulators)
from tests.xdist_groups import configure_node, shared_run_scheduler, write_shared_runs

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_FIXTURES = REPO_ROOT.parent / "shared" / "fixtures"
GRAPHFRAMES_JAR = REPO_ROOT.parent / "shared" / "jars" / "graphframes-0.8.2-spark3.0-s_2.12.jar"


def pyspark_scala_version() -> str | None:
    """The Scala binary version of the installed pyspark, from its bundled scala-library jar."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in jars.glob("scala-library-*.jar"):
        return ".".join(jar.stem.removeprefix("scala-library-").split(".")[:2])
    return None


def graphframes_jar_status() -> tuple[Path | None, str]:
    """``(jar, "")`` when the shared GraphFrames jar fits this pyspark, else ``(None, why not)``."""
    import pyspark

    if not GRAPHFRAMES_JAR.is_file():
        return None, f"GraphFrames jar not found at {GRAPHFRAMES_JAR} (../shared/jars is only beside a CI clone)"
    major = pyspark.__version__.split(".")[0]
    if major != "3":
        return None, (
            f"the shared GraphFrames jar is for Spark 3 / Scala 2.12; this is pyspark {pyspark.__version__} "
            "(Spark 4 needs io.graphframes:graphframes-spark4_2.13, not available here)"
        )
    scala = pyspark_scala_version()
    if scala != "2.12":
        return None, f"the shared GraphFrames jar is built for Scala 2.12; this pyspark bundles Scala {scala}"
    return GRAPHFRAMES_JAR, ""


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """Directory with GPT-2's vocab/merges and real texts; skips when ../shared is absent."""
    if not (SHARED_FIXTURES / "gpt2_vocab.json").is_file():
        missing_tool(f"../shared/fixtures not found at {SHARED_FIXTURES} (only present beside a CI clone)")
    return SHARED_FIXTURES


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local[2,3] SparkSession for every Spark test: 2 threads, up to 3 attempts per task (failure injection).

    When ../shared/jars holds the GraphFrames jar and this pyspark is Spark 3 with Scala 2.12, the jar
    is on the session's class path (``spark.jars``), so the GraphFrames tests run in this session.
    """
    from pipeline.config.schema import SPEEDUPS
    from pipeline.spark.session import build_session

    checkpoints = tmp_path_factory.mktemp("spark-checkpoints")
    settings = {
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "2",
        "spark.driver.memory": "2g",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    jar, _ = graphframes_jar_status()
    if jar is not None:
        settings["spark.jars"] = str(jar)
    # every speed-up on (pipeline.spark.speedups), so the Spark tests run them; the CLI runs of tests/config_texts.py
    # configs run with none
    session = build_session("pipeline-tests", master="local[2,3]", settings=settings, speedups=SPEEDUPS)
    session.sparkContext.setCheckpointDir(str(checkpoints))
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture()
def graphframes_spark(spark):
    """The shared session when it has the GraphFrames jar on its class path; skips with the reason otherwise."""
    jar, reason = graphframes_jar_status()
    if jar is None and not GRAPHFRAMES_JAR.is_file():
        missing_tool(reason)
    if jar is None:  # Spark 4 / Scala 2.13: no GraphFrames build for it exists here, so the engine cannot run
        not_applicable(reason)
    return spark


def pytest_collection_modifyitems(config, items) -> None:
    """Every test that uses the ``spark`` fixture (directly or through another fixture) is marked ``spark``,
    so ``-m spark`` selects all Spark-touching tests (CI runs them on Spark 4 too). On an xdist worker, the
    tests using a shared run are written for the controller's scheduler (tests/xdist_groups.py)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) and item.get_closest_marker("spark") is None:
            item.add_marker(pytest.mark.spark)
    write_shared_runs(config, items)  # on an xdist worker: the shared runs its tests use, for the scheduler


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config) -> None:
    """``-n N`` without ``--dist`` distributes by file (``loadfile``, the README's command) instead of xdist's
    test-by-test ``load``: a file's module fixtures (trained tokenizers, built corpora) are then made once, not
    once per worker that gets one of its tests."""
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", None) == "no":
        config.option.dist = "loadfile"


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` keeps the files sharing a session run on one worker (tests/xdist_groups.py)."""
    return shared_run_scheduler(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """Each xdist worker writes which of its tests use a shared run, for the scheduler (tests/xdist_groups.py)."""
    configure_node(node)


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
