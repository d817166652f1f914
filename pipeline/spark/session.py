"""SparkSession factory: a laptop-friendly local session, or whatever spark-submit configured."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping

from pipeline.config import ConfigError
from pipeline.errors import PipelineError, missing_dependency
from pipeline.spark.speedups import checked, forward
from pipeline.spark.speedups.class_archive import OFF, archive_plan, release, start_builder

LOCAL_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() else "false",  # no bars in log files
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.memory": "4g",
    "spark.sql.session.timeZone": "UTC",
    "spark.cleaner.referenceTracking.cleanCheckpoints": "true",
}


# A local-mode JVM is driver and executors at once and lives for one run: C2 (the optimising JIT) spends
# much of its CPU compiling Spark's one-off planning, Janino and serialization code; C1 alone is faster
# there (docs/benchmarks-history.md, Figures from the code).
LOCAL_JIT = "-XX:TieredStopAtLevel=1"
LOCAL_DAEMON = "pipeline.spark.speedups.local_daemon"  # speed-up local_daemon: the Python workers' daemon


def is_local(master: str) -> bool:
    """True for ``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: driver and executors in one JVM."""
    return re.match(r"^local(\[[^\]]*\])?$", master) is not None


def local_java_options(master: str, user_options: str | None) -> str | None:
    """``spark.driver.extraJavaOptions`` for a session started here on ``master``.

    A ``local`` master gets :data:`LOCAL_JIT` before the user's own options, unless those already
    choose a JIT (any ``Tiered`` flag); any other master keeps the user's options as they are.
    """
    if not is_local(master) or "Tiered" in (user_options or ""):
        return user_options
    return f"{LOCAL_JIT} {user_options}" if user_options else LOCAL_JIT


# the forms spark-submit accepts (it refuses anything else before SparkContext can say why)
_MASTER_URL = re.compile(r"^(local(\[[^\]]*\])?|local-cluster\[[^\]]*\]|yarn|(spark|k8s|mesos)://.+)$")


class JavaMissingError(PipelineError, RuntimeError):
    """Spark needs Java 17 (or newer); raised before Spark tries to start without it."""


def check_java(minimum: int = 17) -> str:
    """Return the ``java -version`` banner, or raise with install instructions."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    hint = (
        "Install Java 17: 'sudo apt-get install openjdk-17-jre-headless' (Debian/Ubuntu), "
        "'brew install openjdk@17' (macOS), or set JAVA_HOME to a JDK 17+."
    )
    if not java or not os.path.exists(java):
        raise JavaMissingError(f"Java was not found (JAVA_HOME or PATH). {hint}")
    banner = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)(?:\.(\d+))?', banner)
    major = int(match.group(1)) if match else 0
    if major == 1 and match and match.group(2):  # "1.8.0" style
        major = int(match.group(2))
    if major < minimum:
        raise JavaMissingError(f"Spark here needs Java {minimum}+, found: {banner.strip()[:80]!r}. {hint}")
    return banner


def runs_here(master: str | None) -> bool:
    """Whether a session started by this process would run its executors on this machine: a ``local`` master
    (``None``: ``local[*]``), not under spark-submit (where the cluster's master applies)."""
    return not _launched_by_spark_submit() and is_local(master or "local[*]")


def _launched_by_spark_submit() -> bool:
    """True when the driver was started by spark-submit (the cluster owns the settings)."""
    return (
        "SPARK_SUBMIT_OPTS" in os.environ
        or os.environ.get("SPARK_ENV_LOADED") == "1"
        or ("PYSPARK_GATEWAY_PORT" in os.environ)
    )


def build_session(
    app_name: str = "pretrain-pipeline",
    master: str | None = None,
    settings: Mapping[str, str] | None = None,
    speedups: Iterable[str] = (),
):
    """Return a SparkSession.

    Locally (no spark-submit) the session uses ``master`` (default ``local[*]``), the laptop defaults
    above and then ``settings``; a ``local`` master's JVM runs with C1 only (:func:`local_java_options`).
    Under spark-submit the master and the cluster's settings are left as the cluster configured them;
    ``settings`` only fill keys the cluster did not set. ``speedups`` (``spark.speedups``) names the
    runtime speed-ups to turn on (:mod:`pipeline.spark.speedups`): ``class_archive`` and ``local_daemon``
    act on a ``local`` master only, the task-side ones on any.
    """
    from pyspark.sql import SparkSession

    speedups = checked(speedups)

    # Workers must run the driver's interpreter, or they miss the virtualenv's packages
    # (docs/running.md, Dependencies and versions).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if _launched_by_spark_submit():
        session = builder.getOrCreate()
        forward(session, speedups)
        conf = session.sparkContext.getConf()
        for key, value in (settings or {}).items():
            if not conf.contains(key) and not key.startswith("spark.driver.") and key != "spark.master":
                try:
                    session.conf.set(key, str(value))
                except Exception:  # static settings cannot change after start; the cluster's win
                    pass
        return session
    banner = check_java()
    preload = _import_in_background(PRELOADED)  # while the JVM's launch keeps this thread waiting
    merged = {**LOCAL_DEFAULTS, **{k: str(v) for k, v in (settings or {}).items()}}
    master = master or "local[*]"
    user_options = merged.get("spark.driver.extraJavaOptions")
    java_options = local_java_options(master, user_options)
    local = is_local(master)
    archive = archive_plan(banner, merged, user_options) if local and "class_archive" in speedups else OFF
    if archive.options:
        java_options = f"{archive.options} {java_options}" if java_options else archive.options
    if local and "local_daemon" in speedups:  # workers import PySpark compiled, not from SPARK_HOME's pyspark.zip
        merged.setdefault("spark.python.daemon.module", LOCAL_DAEMON)
    if java_options:
        merged["spark.driver.extraJavaOptions"] = java_options
    builder = builder.master(master)
    for key, value in merged.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except BaseException:
        release(archive)
        preload.join()  # no import left running into the interpreter's shutdown
        raise
    start_builder(archive, session.sparkContext._jvm)
    forward(session, speedups)
    preload.join()
    return session


# PySpark imports pandas on the driver at the first ``mapInArrow`` (its pandas version check): CPU on the
# critical path, unless imported while the driver only waits for the JVM to start.
PRELOADED = ("pandas",)


def _import_in_background(modules: tuple[str, ...]) -> threading.Thread:
    """A started daemon thread importing ``modules`` (a missing one is left for its user to report)."""

    def run() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except ImportError:
                pass

    thread = threading.Thread(target=run, name="pipeline-preload", daemon=True)
    thread.start()
    return thread


def java_cause(exc: BaseException) -> str:
    """The innermost cause of a Spark start-up failure: the JVM's root exception when there is one."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            while java.getCause() is not None:
                java = java.getCause()
            return str(java.toString())
        except Exception:  # noqa: BLE001 - the gateway may be gone; fall back to the Python text
            pass
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return f"{type(exc).__name__}: {exc}"


def start_session(app_name: str, master: str | None, settings: Mapping[str, str] | None, speedups: Iterable[str] = ()):
    """:func:`build_session` for the CLI: a failure to start is one ConfigError naming the key and the cause."""
    if master and not _MASTER_URL.match(master) and not _launched_by_spark_submit():
        raise ConfigError(
            "spark.master",
            f"{master!r} is not a Spark master URL: expected local, local[N], local[*], "
            "local[N,MAX_FAILURES], spark://HOST:PORT, yarn or k8s://URL",
        )
    try:
        return build_session(app_name, master, settings, speedups)
    except PipelineError:
        raise
    except ImportError as exc:
        raise (missing_dependency(exc) or exc) from None
    except Exception as exc:  # noqa: BLE001 - Py4JJavaError, RuntimeError from the launcher, ...
        cause = " ".join(java_cause(exc).split())[:400]
        named = [k for k in (settings or {}) if k in cause]  # a setting Spark refused, else the master
        key = f"spark.settings.{named[0]}" if named else "spark.master"
        raise ConfigError(key, f"Spark did not start (master {master or 'local[*]'!r}): {cause}") from None
