"""The ``class_archive`` speed-up: a class-data archive (JDK CDS) for local Spark JVMs, so that runs after the first
start faster.

A ``local`` session's JVM loads and verifies ~15,000 classes from Spark's jars before its first job; mapping them from
an archive saves part of that (its measured gain: docs/benchmarks-history.md, Runtime speed-ups). On only when
``spark.speedups`` names it (:func:`pipeline.spark.session.build_session`). The first local session on a machine only
records the names of the classes it loads (``-XX:DumpLoadedClassList``, which costs nothing measurable); a detached
builder process waits for that JVM to exit, then dumps a static archive from the list (``java -Xshare:dump``, at low
priority) under a temporary name and renames it into place once the dump succeeded. Later sessions map it
(``-XX:SharedArchiveFile``). Recording at exit with ``-XX:ArchiveClassesAtExit`` instead slowed the recording run
itself.

Archives live in the user cache (``$XDG_CACHE_HOME/spark-pretrain-pipeline/jvm``, default
``~/.cache/...``), keyed by the Java build, the pyspark version and the class path settings; about
150 MB each; besides the session's own, the two most recently used are kept (each checkout or
class path is a key of its own, so they would pile up). One builder per key at a time holds
``classes-KEY.lock`` (touched while it waits; stale after ten minutes untouched); a failed dump is not
retried for a week. ``PIPELINE_JVM_ARCHIVE=off``, or a CDS option of your own in
``spark.driver.extraJavaOptions``, turns it all off.

Run as a script (``python class_archive.py JOB.json``) this file is the builder; it needs only the
standard library.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

STATIC_MAGIC = bytes.fromhex("a2ab0bf0")  # CDS_ARCHIVE_MAGIC 0xf00baba2, little-endian: a static archive
LOCK_STALE_SECONDS = 600  # a builder touches its lock every LOCK_TOUCH_SECONDS while it waits
LOCK_TOUCH_SECONDS = 30
RETRY_SECONDS = 7 * 86400  # a failed dump is tried again after a week
UNUSED_SECONDS = 7 * 86400  # archives of other Java / pyspark builds, unused this long, are removed
KEEP_OTHERS = 2  # and of other keys' archives only this many, the most recently used, are kept
DUMP_TIMEOUT_SECONDS = 900
USER_CDS_FLAGS = ("SharedArchiveFile", "ArchiveClassesAtExit", "Xshare", "DumpSharedSpaces", "ClassList")
QUIET = "-Xlog:cds=off -Xlog:class+path=off"  # an unusable archive is skipped; its warning would go to stdout
TEMPORARY = (".list", ".job", ".part")  # a build's files beside its lock


@dataclass(frozen=True)
class ArchivePlan:
    """What a local session does about the archive: JVM ``options`` to add, and for the session that
    records the class list, the builder's ``job`` file (see :func:`start_builder`)."""

    options: str | None = None
    job: Path | None = None


OFF = ArchivePlan()


def archive_directory() -> Path:
    """Where the archives live: ``$XDG_CACHE_HOME`` (default ``~/.cache``) ``/spark-pretrain-pipeline/jvm``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spark-pretrain-pipeline" / "jvm"


def archive_key(java_banner: str, settings: Mapping[str, str]) -> str:
    """What an archive depends on: the Java build, pyspark's jars and the extra class path settings."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    listing = sorted((p.name, p.stat().st_size) for p in jars.glob("*.jar")) if jars.is_dir() else []
    extra = [settings.get(k, "") for k in ("spark.jars", "spark.driver.extraClassPath", "spark.jars.packages")]
    text = repr((java_banner.strip(), pyspark.__version__, listing, extra))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def archive_path(java_banner: str, settings: Mapping[str, str]) -> Path:
    """The archive a local session with these settings maps once it exists."""
    return archive_directory() / f"classes-{archive_key(java_banner, settings)}.jsa"


def is_complete(path: Path) -> bool:
    """True when ``path`` starts with a static archive's magic number."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == STATIC_MAGIC
    except OSError:
        return False


def _key_of(path: Path) -> str:
    return path.name.split(".")[0].removeprefix("classes-")


def _age(path: Path, now: float) -> float:
    return now - path.stat().st_mtime


def _tidy(directory: Path, key: str, now: float) -> None:
    """Drop stale locks, the files of builds no lock holds, old failure marks, and the archives of
    other keys unused for a week or older than the :data:`KEEP_OTHERS` most recently used. Another
    session may tidy at the same time: files gone meanwhile are skipped."""
    for kind, limit in ((".lock", LOCK_STALE_SECONDS), (".failed", RETRY_SECONDS)):
        for path in directory.glob(f"classes-*{kind}"):
            try:
                if _age(path, now) > limit:
                    path.unlink()
            except FileNotFoundError:
                continue
    locked = {_key_of(p) for p in directory.glob("classes-*.lock")}
    others: list[tuple[float, Path]] = []
    for path in directory.glob("classes-*.*"):
        try:
            if path.suffix in TEMPORARY and _key_of(path) not in locked:
                path.unlink()
            elif path.suffix == ".jsa" and _key_of(path) != key:
                others.append((_age(path, now), path))
        except FileNotFoundError:
            continue
    for rank, (age, path) in enumerate(sorted(others, key=lambda pair: pair[0])):
        if rank >= KEEP_OTHERS or age > UNUSED_SECONDS:
            path.unlink(missing_ok=True)


def archive_plan(java_banner: str, settings: Mapping[str, str], user_options: str | None) -> ArchivePlan:
    """Map this machine's archive; or record the class list for its builder; or nothing (:data:`OFF`).

    Off when ``PIPELINE_JVM_ARCHIVE`` is ``off``/``0``/``false``/``no``, when ``user_options`` hold a
    CDS option of their own, or when the cache directory cannot be written. No recording while another
    session's build of the same archive is under way, or within a week of a failed one.
    """
    if os.environ.get("PIPELINE_JVM_ARCHIVE", "").lower() in ("off", "0", "false", "no"):
        return OFF
    if any(flag in (user_options or "") for flag in USER_CDS_FLAGS) or not Path(__file__).is_file():
        return OFF  # (a zipped package cannot run the builder script)
    final = archive_path(java_banner, settings)
    directory, key = final.parent, _key_of(final)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _tidy(directory, key, time.time())
        if is_complete(final):
            os.utime(final)  # in use: not removed as unused
            return ArchivePlan(f"-XX:SharedArchiveFile={final} {QUIET}")
        if (directory / f"classes-{key}.failed").exists():
            return OFF
        lock = os.open(directory / f"classes-{key}.lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:  # another session records or builds it
        return OFF
    except OSError:  # a read-only or full home directory: start without an archive
        return OFF
    os.write(lock, str(os.getpid()).encode())
    os.close(lock)
    base = directory / f"classes-{key}"
    return ArchivePlan(f"-XX:DumpLoadedClassList={base}.list", base.with_suffix(".job"))


def release(plan: ArchivePlan) -> None:
    """Give up a recording ``plan`` (its session did not start): its lock goes, so another may record."""
    if plan.job is not None:
        for suffix in (".lock", ".list"):
            plan.job.with_suffix(suffix).unlink(missing_ok=True)


def start_builder(plan: ArchivePlan, jvm) -> None:
    """Hand the class list of the running JVM (a py4j view of ``java.lang``) to a detached builder
    that dumps the archive once that JVM has exited."""
    if plan.job is None:
        return
    try:
        system = jvm.java.lang.System
        arguments = [str(a) for a in jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()]
        if plan.options not in arguments:  # a session that was already running: it records nothing
            release(plan)
            return
        job = {
            "pid": int(jvm.java.lang.ProcessHandle.current().pid()),
            "java": str(Path(system.getProperty("java.home")) / "bin" / "java"),
            "class_path": str(system.getProperty("java.class.path")),
            "heap": [a for a in arguments if a.startswith("-Xmx")][-1:],
        }
        plan.job.write_text(json.dumps(job))
        subprocess.Popen(
            [sys.executable, __file__, str(plan.job)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives this driver, and a Ctrl-C of its terminal
            close_fds=True,
        )
    except Exception:  # noqa: BLE001 - the archive is an optimisation: never fail a run over it
        release(plan)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def build(job_path: Path) -> bool:
    """The builder: wait for the recording JVM to exit, dump the archive, rename it into place."""
    base = job_path.with_suffix("")
    lock, class_list, part = (base.with_suffix(s) for s in (".lock", ".list", ".part"))
    final = base.with_suffix(".jsa")
    built = False
    try:
        job = json.loads(job_path.read_text())
        while _alive(job["pid"]):
            time.sleep(0.5)
            if _age(lock, time.time()) > LOCK_TOUCH_SECONDS:
                os.utime(lock)
        command = [
            job["java"],
            "-Xshare:dump",
            f"-XX:SharedClassListFile={class_list}",
            f"-XX:SharedArchiveFile={part}",
            *job["heap"],
            *QUIET.split(),
            "-cp",
            job["class_path"],
        ]
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, timeout=DUMP_TIMEOUT_SECONDS, check=False
        )
        built = done.returncode == 0 and is_complete(part)
        if built:
            os.chmod(part, 0o444)
            os.replace(part, final)
        else:
            base.with_suffix(".failed").write_bytes(done.stdout[-4000:] + done.stderr[-4000:])
    except Exception as exc:  # noqa: BLE001 - a detached process: leave a mark instead of a traceback
        base.with_suffix(".failed").write_text(f"{type(exc).__name__}: {exc}")
    finally:
        for path in (class_list, part, job_path, lock):
            path.unlink(missing_ok=True)
    return built


if __name__ == "__main__":
    try:
        os.nice(10)
    except OSError:
        pass
    sys.exit(0 if build(Path(sys.argv[1])) else 1)
