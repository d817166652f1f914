"""The Python worker daemon of a local session imports PySpark from the installed package, not from
``$SPARK_HOME/python/lib/pyspark.zip``, only when both hold the same release (speed-up local_daemon,
pipeline/spark/speedups/local_daemon.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pyarrow as pa
import pyspark

from pipeline.spark.speedups.local_daemon import (
    PRELOADED,
    archive_version,
    installed_pyspark_first,
    installed_version,
    preload,
)
from tests.oracles import not_applicable


def _package(root: Path, version: str) -> str:
    (root / "pyspark").mkdir(parents=True)
    (root / "pyspark" / "version.py").write_text(f'__version__: str = "{version}"\n')
    return str(root)


def _archive(path: Path, version: str | None) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        if version is not None:
            zf.writestr("pyspark/version.py", f"__version__ = '{version}'\n")
        zf.writestr("pyspark/__init__.py", "")
    return str(path)


def test_the_archive_leaves_the_path_only_when_it_holds_the_installed_release(tmp_path):
    site = _package(tmp_path / "site", "3.5.9")
    (tmp_path / "a").mkdir()
    same = _archive(tmp_path / "a" / "pyspark.zip", "3.5.9")
    (tmp_path / "b").mkdir()
    other = _archive(tmp_path / "b" / "pyspark.zip", "3.5.8")
    (tmp_path / "c").mkdir()
    unreadable = _archive(tmp_path / "c" / "pyspark.zip", None)
    py4j = str(tmp_path / "py4j-0.10.9.7-src.zip")

    assert archive_version(same) == "3.5.9" and installed_version([py4j, site]) == "3.5.9"
    assert installed_pyspark_first([same, py4j, site]) == [py4j, site]
    for path in ([other, py4j, site], [unreadable, py4j, site], [same, other, site], [same, py4j]):
        assert installed_pyspark_first(path) == path
    assert installed_pyspark_first([py4j, site]) == [py4j, site]


def test_workers_of_the_local_session_import_the_installed_pyspark(spark):
    daemon = spark.sparkContext.getConf().get("spark.python.daemon.module")
    assert daemon == "pipeline.spark.speedups.local_daemon"  # the tests' session turns every speed-up on

    def where(batches):
        import sys

        import pyspark as worker_pyspark

        for _ in batches:
            archives = [p for p in sys.path if p.endswith("pyspark.zip")]
            yield pa.RecordBatch.from_pydict({"file": [worker_pyspark.__file__], "archives": [len(archives)]})

    rows = spark.range(1).mapInArrow(where, "file string, archives long").collect()
    assert rows[0]["file"] == pyspark.__file__
    assert rows[0]["archives"] == 0


def test_preload_imports_what_imports_and_skips_the_rest():
    assert preload(("json", "no_such_module_c47h", "pyarrow")) == ["json", "pyarrow"]


def test_the_daemon_has_imported_pyarrow_and_pandas_before_it_forks_a_worker(spark):
    """The worker's parent is the daemon: its memory maps name the native libraries of the modules it imported
    (without the preload the daemon imports neither; its workers would, each after the fork)."""
    assert PRELOADED == ("pyarrow", "pandas")
    if not Path("/proc/self/maps").is_file():
        not_applicable("no /proc/PID/maps on this system (Linux only)")

    def parent_libraries(batches):
        import os

        with open(f"/proc/{os.getppid()}/maps") as f:
            maps = f.read()
        for _ in batches:
            yield pa.RecordBatch.from_pydict(
                {"pyarrow": ["/pyarrow/lib." in maps], "pandas": ["/pandas/_libs/lib." in maps]}
            )

    row = spark.range(1).mapInArrow(parent_libraries, "pyarrow boolean, pandas boolean").collect()[0]
    assert row["pyarrow"] and row["pandas"]
