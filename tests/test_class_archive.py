"""The class-data archive of local Spark JVMs (pipeline.spark.class_archive): written once, then mapped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.spark import class_archive
from pipeline.spark.class_archive import DYNAMIC_MAGIC, archive_key, archive_options, is_complete

REPO = Path(__file__).resolve().parents[1]
BANNER = 'openjdk version "17.0.15" 2025-04-15'


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PIPELINE_JVM_ARCHIVE", raising=False)
    return tmp_path / "spark-pretrain-pipeline" / "jvm"


def _option(options: str, name: str) -> Path:
    value = next(o for o in options.split() if o.startswith(f"-XX:{name}="))
    return Path(value.split("=", 1)[1])


def test_first_run_writes_a_part_then_a_complete_one_is_mapped(cache):
    first = archive_options(BANNER, {}, None)
    part = _option(first, "ArchiveClassesAtExit")
    assert part.parent == cache and part.name.endswith(".part")
    assert "SharedArchiveFile" not in first
    part.write_bytes(DYNAMIC_MAGIC + b"\0" * 64)  # what the JVM leaves: header (with the magic) written last
    second = archive_options(BANNER, {}, None)
    mapped = _option(second, "SharedArchiveFile")
    assert mapped == cache / f"classes-{archive_key(BANNER, {})}.jsa" and mapped.is_file()
    assert not part.exists()


def test_a_part_without_its_header_is_never_mapped(cache):
    part = _option(archive_options(BANNER, {}, None), "ArchiveClassesAtExit")
    part.write_bytes(b"\0" * 4096)  # a JVM still writing (or killed while writing): header not yet there
    again = archive_options(BANNER, {}, None)
    assert "SharedArchiveFile" not in again and part.exists()
    stale = time.time() - class_archive.ABANDONED_SECONDS - 1
    os.utime(part, (stale, stale))
    archive_options(BANNER, {}, None)
    assert not part.exists()


def test_a_finished_part_of_another_build_is_promoted_under_its_own_key(cache):
    cache.mkdir(parents=True)
    other = cache / "classes-2222222222222222.123-abcd.part"
    other.write_bytes(DYNAMIC_MAGIC + b"\0" * 8)
    assert "ArchiveClassesAtExit" in archive_options(BANNER, {}, None)  # this build has no archive yet
    assert not other.exists() and is_complete(cache / "classes-2222222222222222.jsa")


def test_other_builds_archives_go_when_unused_for_a_week(cache):
    cache.mkdir(parents=True)
    old, recent = cache / "classes-0000000000000000.jsa", cache / "classes-1111111111111111.jsa"
    for path in (old, recent):
        path.write_bytes(DYNAMIC_MAGIC)
    week = time.time() - class_archive.UNUSED_SECONDS - 1
    os.utime(old, (week, week))
    archive_options(BANNER, {}, None)
    assert not old.exists() and recent.exists()


def test_the_key_follows_the_java_build_and_the_class_path():
    assert archive_key(BANNER, {}) != archive_key('openjdk version "21.0.2"', {})
    assert archive_key(BANNER, {}) != archive_key(BANNER, {"spark.jars": "/x/graphframes.jar"})
    assert archive_key(BANNER, {}) == archive_key(BANNER, {"spark.sql.shuffle.partitions": "4"})


@pytest.mark.parametrize("own", ["-XX:SharedArchiveFile=/x.jsa", "-Xshare:off", "-XX:ArchiveClassesAtExit=/y"])
def test_a_users_own_cds_option_turns_it_off(cache, own):
    assert archive_options(BANNER, {}, own) is None


def test_the_environment_turns_it_off(cache, monkeypatch):
    monkeypatch.setenv("PIPELINE_JVM_ARCHIVE", "off")
    assert archive_options(BANNER, {}, None) is None
    assert not cache.exists()


SESSION = """
import sys
from pipeline.spark.session import build_session
log = sys.argv[1]
spark = build_session("archive-test", master="local[1]",
                      settings={"spark.driver.extraJavaOptions": f"-Xlog:class+load=info:file={log}"})
print("rows", spark.range(5).count())
spark.stop()
"""


@pytest.mark.slow
def test_a_second_local_session_loads_spark_from_the_archive(tmp_path):
    """Two real local sessions, one cache: the second JVM loads SparkContext from the archive, and the
    first one's archive writing prints nothing on stdout."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    env.pop("PIPELINE_JVM_ARCHIVE", None)
    sources = []
    for run in (1, 2):
        log = tmp_path / f"classes-{run}.txt"
        done = subprocess.run(
            [sys.executable, "-c", SESSION, str(log)], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout == "rows 5\n", done.stdout  # nothing from the JVM (archive warnings are off)
        line = next(x for x in log.read_text().splitlines() if " org.apache.spark.SparkContext source:" in x)
        sources.append(line.split("source:", 1)[1].strip())
    assert sources[0].endswith(".jar")  # the first JVM read it from Spark's jar, and wrote the archive
    assert sources[1] == "shared objects file (top)"  # the second mapped that archive
    archives = list((tmp_path / "cache" / "spark-pretrain-pipeline" / "jvm").glob("classes-*.jsa"))
    assert len(archives) == 1 and archives[0].read_bytes()[:4] == DYNAMIC_MAGIC
