"""The start of every Python task of the pipeline in a reused Spark worker: keep per-task costs small.

PySpark's worker pays two costs per task, whatever the task does:

* ``importlib.invalidate_caches()`` at the start re-reads every zip archive on the path on
  CPython 3.10 and 3.11: :func:`pipeline.spark.worker_imports.skip_unchanged_zip_rescans`.
* ``gc.collect()`` after the task (``pyspark/daemon.py``), a full collection over everything the worker
  holds: with numba, pyarrow and a tokenizer loaded, a large share of what a tokenize job spends outside
  our own code (docs/running.md).
  :func:`gc.freeze` at the start of a task moves what survived the previous task's collection
  (modules, compiled kernels, broadcast values) out of the collector's sight for good, so the
  collection after this task only looks at this task's objects. Frozen objects are still freed by
  reference counting; only a reference cycle among them would never be collected.

:func:`per_task` wraps a ``mapInArrow`` body so that it does both first. Where this is proven
(tests/e2e/test_cluster_worker_memory.py, a standalone cluster): over 1,000 tasks a worker's RSS and frozen
objects stay flat, and a user's Python or pandas UDF later in the same workers gets its results, a working
collector and its newly added py-files. The limit: the freeze also catches the task's own command (the
function Spark unpickled for it), so that command must not be a reference cycle, or each task's copy is
never freed. The pipeline's commands are module functions, lambdas and ``functools.partial`` over plain
values and broadcasts (no classes or mutually referring functions shipped by value): wrap only those, and
never a user's function.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pipeline.spark.worker_imports import skip_unchanged_zip_rescans


def start_task() -> None:
    """Skip unchanged zip re-reads from now on, and freeze what earlier tasks left alive."""
    import os

    off = os.environ.get("PIPELINE_R42_OFF", "")
    if "zip" not in off:
        skip_unchanged_zip_rescans()
    if "freeze" not in off:
        gc.freeze()


def per_task(body: Callable[[Iterable[Any]], Iterable[Any]]) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """``body`` (a ``mapInArrow`` function) preceded by :func:`start_task` in the worker.

    ``body`` and what it captures must hold no reference cycle (see the module's docstring)."""

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        start_task()
        yield from body(batches)

    return run
