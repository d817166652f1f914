"""The ``zip_rescans`` speed-up: Spark Python workers on CPython 3.10 and 3.11 stop re-reading unchanged zip archives
on every task (on when ``spark.speedups`` names it: :func:`pipeline.spark.worker_task.start_task`).

PySpark's worker calls ``importlib.invalidate_caches()`` at the start of every task (py-files may
have been added to ``sys.path``). On CPython 3.10 and 3.11 that makes every ``zipimporter`` re-read
its archive's whole directory at once (CPython issue gh-103200, made lazy in 3.12). With
``pyspark.zip`` and ``py4j-*.zip`` on the workers' path this costs CPU on every task (the figure:
docs/benchmarks-history.md, Runtime speed-ups).

:func:`skip_unchanged_zip_rescans` makes a worker's ``zipimporter.invalidate_caches`` re-read an
archive only when its (mtime, size, inode) differ from those at that importer's last read. Archives Spark
adds later are read as before; an archive replaced or rewritten is re-read; the only case that
behaves differently is an archive rewritten in place with the same mtime (to the nanosecond), size
and inode, which neither Spark nor this pipeline does. Nothing changes on other Python versions.
"""

from __future__ import annotations

import os
import sys
import zipimport
from collections.abc import Callable

_STAMP = "_pipeline_read_stamp"  # attribute on each zipimporter: (mtime ns, size, inode) of its last read
_original: Callable[[zipimport.zipimporter], None] | None = None


def needs_fix(version: tuple[int, int] | None = None) -> bool:
    """Whether this CPython's ``zipimporter.invalidate_caches`` re-reads the archive eagerly."""
    major_minor = version or sys.version_info[:2]
    return (3, 10) <= major_minor < (3, 12)


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _invalidate_if_changed(importer: zipimport.zipimporter) -> None:
    """``zipimporter.invalidate_caches`` that skips an archive unchanged since its last read."""
    stamp = _stamp(importer.archive)
    if stamp is not None and getattr(importer, _STAMP, None) == stamp:
        return
    assert _original is not None
    _original(importer)
    setattr(importer, _STAMP, stamp)


def skip_unchanged_zip_rescans() -> bool:
    """Install the check in this process once (idempotent); True when it is in place.

    Called at the start of a task, right after PySpark's own ``invalidate_caches`` re-read every
    archive on the path, so those reads are recorded as current."""
    global _original
    if not needs_fix():
        return False
    if _original is None:
        for importer in list(sys.path_importer_cache.values()):
            if isinstance(importer, zipimport.zipimporter):
                setattr(importer, _STAMP, _stamp(importer.archive))
        _original = zipimport.zipimporter.invalidate_caches
        zipimport.zipimporter.invalidate_caches = _invalidate_if_changed  # type: ignore[method-assign,assignment]
    return True
