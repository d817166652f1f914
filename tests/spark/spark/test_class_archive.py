"""The speed-up class_archive (pipeline.spark.speedups.class_archive): a class-data archive of local Spark JVMs,
recorded once, built, mapped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.spark.speedups import class_archive
from pipeline.spark.speedups.class_archive import (
    OFF,
    STATIC_MAGIC,
    archive_key,
    archive_plan,
    build,
    is_complete,
    release,
)

REPO = Path(__file__).resolve().parents[3]
BANNER = 'openjdk version "17.0.15" 2025-04-15'


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PIPELINE_JVM_ARCHIVE", raising=False)
    return tmp_path / "spark-pretrain-pipeline" / "jvm"


def _base(cache: Path) -> Path:
    return cache / f"classes-{archive_key(BANNER, {})}"


def _option(options: str, name: str) -> Path:
    value = next(o for o in options.split() if o.startswith(f"-XX:{name}="))
    return Path(value.split("=", 1)[1])


def test_the_first_session_records_the_class_list_and_holds_the_lock(cache):
    first = archive_plan(BANNER, {}, None)
    assert _option(first.options, "DumpLoadedClassList") == _base(cache).with_suffix(".list")
    assert first.job == _base(cache).with_suffix(".job")
    assert _base(cache).with_suffix(".lock").read_text() == str(os.getpid())
    assert archive_plan(BANNER, {}, None) == OFF  # a second session meanwhile: neither records nor maps
    release(first)
    assert not _base(cache).with_suffix(".lock").exists()
    assert archive_plan(BANNER, {}, None).job is not None  # released: the next session records


def test_a_built_archive_is_mapped_and_kept_fresh(cache):
    cache.mkdir(parents=True)
    final = _base(cache).with_suffix(".jsa")
    final.write_bytes(STATIC_MAGIC + b"\0" * 64)
    stale = time.time() - 3600
    os.utime(final, (stale, stale))
    plan = archive_plan(BANNER, {}, None)
    assert _option(plan.options, "SharedArchiveFile") == final and plan.job is None
    assert final.stat().st_mtime > stale + 3000  # in use: touched, so never removed as unused


def test_a_file_without_the_static_magic_is_never_mapped(cache):
    cache.mkdir(parents=True)
    _base(cache).with_suffix(".jsa").write_bytes(b"\0" * 4096)
    assert "SharedArchiveFile" not in (archive_plan(BANNER, {}, None).options or "")


def test_a_stale_lock_and_its_leftovers_are_cleared(cache):
    cache.mkdir(parents=True)
    base = _base(cache)
    for suffix in (".lock", ".list", ".job", ".part"):
        base.with_suffix(suffix).write_text("x")
    assert archive_plan(BANNER, {}, None) == OFF  # a fresh lock: a builder is at work
    old = time.time() - class_archive.LOCK_STALE_SECONDS - 1
    os.utime(base.with_suffix(".lock"), (old, old))
    plan = archive_plan(BANNER, {}, None)  # stale: its files go, and this session records anew
    assert plan.job is not None
    assert not base.with_suffix(".part").exists() and not base.with_suffix(".job").exists()


def test_a_failed_build_is_not_retried_for_a_week(cache):
    cache.mkdir(parents=True)
    failed = _base(cache).with_suffix(".failed")
    failed.write_text("dump failed")
    assert archive_plan(BANNER, {}, None) == OFF
    week = time.time() - class_archive.RETRY_SECONDS - 1
    os.utime(failed, (week, week))
    assert archive_plan(BANNER, {}, None).job is not None and not failed.exists()


def test_other_builds_archives_go_when_unused_for_a_week(cache):
    cache.mkdir(parents=True)
    old, recent = cache / "classes-0000000000000000.jsa", cache / "classes-1111111111111111.jsa"
    for path in (old, recent):
        path.write_bytes(STATIC_MAGIC)
    week = time.time() - class_archive.UNUSED_SECONDS - 1
    os.utime(old, (week, week))
    archive_plan(BANNER, {}, None)
    assert not old.exists() and recent.exists()


def test_only_the_most_recently_used_archives_of_other_builds_are_kept(cache):
    cache.mkdir(parents=True)
    others = [cache / f"classes-{digit * 16}.jsa" for digit in "2345"]
    for hours, path in enumerate(others):  # 2 used last, 5 first
        path.write_bytes(STATIC_MAGIC)
        used = time.time() - 3600 * (hours + 1)
        os.utime(path, (used, used))
    archive_plan(BANNER, {}, None)
    assert [path.exists() for path in others] == [True] * class_archive.KEEP_OTHERS + [False] * (
        len(others) - class_archive.KEEP_OTHERS
    )


def test_the_key_follows_the_java_build_and_the_class_path():
    assert archive_key(BANNER, {}) != archive_key('openjdk version "21.0.2"', {})
    assert archive_key(BANNER, {}) != archive_key(BANNER, {"spark.jars": "/x/graphframes.jar"})
    assert archive_key(BANNER, {}) == archive_key(BANNER, {"spark.sql.shuffle.partitions": "4"})


@pytest.mark.parametrize(
    "own", ["-XX:SharedArchiveFile=/x.jsa", "-Xshare:off", "-XX:ArchiveClassesAtExit=/y", "-XX:DumpLoadedClassList=/z"]
)
def test_a_users_own_cds_option_turns_it_off(cache, own):
    assert archive_plan(BANNER, {}, own) == OFF


def test_the_environment_turns_it_off(cache, monkeypatch):
    monkeypatch.setenv("PIPELINE_JVM_ARCHIVE", "off")
    assert archive_plan(BANNER, {}, None) == OFF
    assert not cache.exists()


def test_a_dump_that_fails_leaves_a_mark_and_no_archive(cache):
    """The builder (run in process here) with a JVM that exits 1: the mark is written, its files are gone."""
    plan = archive_plan(BANNER, {}, None)
    plan.job.write_text(json.dumps({"pid": 2**22 + 7, "java": "/bin/false", "class_path": "", "heap": []}))
    assert build(plan.job) is False
    base = plan.job.with_suffix("")
    assert base.with_suffix(".failed").exists() and not base.with_suffix(".jsa").exists()
    assert [p.suffix for p in cache.iterdir()] == [".failed"]


SESSION = """
import sys
from pipeline.spark.session import build_session
log = sys.argv[1]
spark = build_session("archive-test", master="local[1]", speedups=["class_archive"],
                      settings={"spark.driver.extraJavaOptions": f"-Xlog:class+load=info:file={log}"})
print("rows", spark.range(5).count())
spark.stop()
"""


@pytest.mark.slow
def test_a_second_local_session_loads_spark_from_the_archive(tmp_path):
    """Two real local sessions, one cache: the first records its classes and prints nothing more on stdout;
    the builder it leaves dumps the archive after that JVM exits; the second JVM loads SparkContext from it."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    env.pop("PIPELINE_JVM_ARCHIVE", None)
    directory = tmp_path / "cache" / "spark-pretrain-pipeline" / "jvm"
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
        deadline = time.time() + 240
        while list(directory.glob("*.lock")) and time.time() < deadline:  # the builder at work
            time.sleep(0.5)
    assert sources[0].endswith(".jar")  # the first JVM read it from Spark's jar
    assert sources[1] == "shared objects file"  # the second mapped the archive built after the first
    assert [p.suffix for p in directory.iterdir()] == [".jsa"]  # the builder's files are gone
    assert is_complete(next(directory.iterdir()))


def test_a_session_already_running_records_nothing(cache, spark):
    """build_session in a process whose JVM already runs gets that JVM back, which records no class list:
    the lock is released at once and no builder is left waiting for it."""
    from pipeline.spark.session import build_session

    assert build_session("again", master="local[2]", speedups=["class_archive"]) is not None
    assert list(cache.iterdir()) == []
