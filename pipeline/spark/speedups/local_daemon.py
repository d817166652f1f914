"""The ``local_daemon`` speed-up: the Python worker daemon of a session started here on a ``local`` master
(``spark.python.daemon.module``, set by :func:`pipeline.spark.session.build_session` when ``spark.speedups`` names
it): PySpark's own daemon, importing PySpark from the installed package rather than from
``$SPARK_HOME/python/lib/pyspark.zip``.

Spark puts that archive first on its Python workers' path. It holds sources only, so every daemon compiles the
PySpark modules it imports before the first Python task of a run can start; the installed package has them compiled
(the gain: docs/benchmarks-history.md, Runtime speed-ups). With a pip-installed PySpark, ``$SPARK_HOME`` is that
package and the archive holds the same release; this module checks that (the two ``pyspark/version.py``) and, only
then, takes the archive off the path before importing PySpark's daemon, whose forked workers inherit the path. In
any other case (another release, no installed package, anything unexpected) the path stays as Spark made it. py4j's
archive is left alone: the installed py4j may be another release than Spark's.

Before the daemon forks its first worker it also imports :data:`PRELOADED`, the modules every worker of this
package's stages imports before or at its first batch (each stage's Python step is a ``mapInArrow`` body, and pyarrow
imports pandas at its first ``pa.array``): each forked worker then inherits them, instead of every worker importing
them again (a local session runs one worker per core, each its own process). A module that does not import is left
for the worker to report, as without this.

Not for a cluster: its executors' Python need not hold this package or the same PySpark as the driver.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import zipfile

ARCHIVE = "pyspark.zip"
VERSION_FILE = "pyspark/version.py"
PRELOADED = ("pyarrow", "pandas")  # imported once by the daemon, inherited by its forked workers
_VERSION = re.compile(r"""__version__(?:\s*:\s*str)?\s*=\s*["']([^"']+)["']""")


def _version(source: str) -> str | None:
    match = _VERSION.search(source)
    return match.group(1) if match else None


def archive_version(archive: str) -> str | None:
    """The PySpark release of a ``pyspark.zip``, or None when it cannot be read."""
    try:
        with zipfile.ZipFile(archive) as zf:
            return _version(zf.read(VERSION_FILE).decode("utf-8"))
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        return None


def installed_version(path: list[str]) -> str | None:
    """The release of the first PySpark package directory found on ``path``, or None."""
    for entry in path:
        candidate = os.path.join(entry or os.getcwd(), *VERSION_FILE.split("/"))
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as f:
                    return _version(f.read())
            except (OSError, UnicodeDecodeError):
                return None
    return None


def installed_pyspark_first(path: list[str]) -> list[str]:
    """``path`` without its ``pyspark.zip`` entries when every one of them holds the release of the PySpark package
    the rest of ``path`` finds; else ``path`` unchanged."""
    archives = [p for p in path if os.path.basename(p) == ARCHIVE]
    if not archives:
        return path
    rest = [p for p in path if p not in archives]
    installed = installed_version(rest)
    if installed is None or any(archive_version(a) != installed for a in archives):
        return path
    return rest


def preload(modules: tuple[str, ...]) -> list[str]:
    """Import ``modules`` here (one that fails to import is skipped); the names imported."""
    done = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - any failure is the worker's to meet and report where it imports it
            continue
        done.append(name)
    return done


if __name__ == "__main__":
    sys.path[:] = installed_pyspark_first(sys.path)
    preload(PRELOADED)
    from pyspark.daemon import manager

    manager()
