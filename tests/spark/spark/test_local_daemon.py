"""The Python worker daemon of a local session imports PySpark from the installed package, not from
``$SPARK_HOME/python/lib/pyspark.zip``, only when both hold the same release (speed-up local_daemon,
pipeline/spark/speedups/local_daemon.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pyarrow as pa
import pyspark

from pipeline.spark.speedups.local_daemon import archive_version, installed_pyspark_first, installed_version


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
