"""Runtime speed-ups a run turns on by name in ``spark.speedups`` (docs/config.md, Speed-ups); none is on by default.

One module each; its docstring says what it does, docs/benchmarks-history.md (Runtime speed-ups) what it gained:

- ``class_archive`` (:mod:`.class_archive`): a local master's JVM maps a class-data archive of Spark's classes.
- ``local_daemon`` (:mod:`.local_daemon`): a local master's Python workers import the installed, compiled PySpark.
- ``zip_rescans`` (:mod:`.zip_rescans`): a task's ``importlib.invalidate_caches`` skips unchanged zip archives.
- ``gc_freeze`` (:mod:`.gc_freeze`): a task freezes what earlier tasks left alive, out of the collector's sight.

The first two act where :func:`pipeline.spark.session.build_session` starts a local session; the other two travel
to every Python task in ``SparkContext.environment`` (:data:`ENV`, set by :func:`forward`) and act when the task
starts (:func:`pipeline.spark.worker_task.start_task`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pipeline.config import ConfigError
from pipeline.config.schema import SPEEDUPS

ENV = "PIPELINE_SPEEDUPS"  # the task-side speed-ups turned on, comma-separated
TASK_SIDE = ("zip_rescans", "gc_freeze")


def checked(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` as a tuple, or a ConfigError naming ``spark.speedups`` for a name that is no speed-up."""
    names = tuple(names)
    unknown = [n for n in names if n not in SPEEDUPS]
    if unknown:
        raise ConfigError("spark.speedups", f"unknown speed-up {unknown[0]!r}: expected {', '.join(SPEEDUPS)}")
    return names


def forward(spark, names: Iterable[str]) -> str:
    """Pass the task-side speed-ups among ``names`` to every Python function the session creates from now on."""
    value = ",".join(n for n in names if n in TASK_SIDE)
    spark.sparkContext.environment[ENV] = value
    return value


def in_this_task() -> frozenset[str]:
    """The task-side speed-ups the running task was given (in a Python worker: from its environment)."""
    return frozenset(n for n in os.environ.get(ENV, "").split(",") if n)
