"""The start of every Python task of the pipeline in a reused Spark worker: the task-side speed-ups it was given.

:func:`per_task` wraps a ``mapInArrow`` body so that it runs :func:`start_task` first, which turns on the
speed-ups named in ``spark.speedups`` that act in a task (:mod:`pipeline.spark.speedups`): ``zip_rescans``
(:mod:`~pipeline.spark.speedups.zip_rescans`) and ``gc_freeze`` (:mod:`~pipeline.spark.speedups.gc_freeze`).
With none of them on, the wrapper only passes the batches through.

Because ``gc_freeze`` also freezes the task's own command (the function Spark unpickled for it), that command
must not be a reference cycle, or each task's copy is never freed. The pipeline's commands are module
functions, lambdas and ``functools.partial`` over plain values and broadcasts (no classes or mutually referring
functions shipped by value): wrap only those, and never a user's function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pipeline.spark.speedups import in_this_task
from pipeline.spark.speedups.gc_freeze import freeze_survivors
from pipeline.spark.speedups.zip_rescans import skip_unchanged_zip_rescans


def start_task() -> None:
    """Turn on the task-side speed-ups this task was given (none: nothing happens)."""
    given = in_this_task()
    if "zip_rescans" in given:
        skip_unchanged_zip_rescans()
    if "gc_freeze" in given:
        freeze_survivors()


def per_task(body: Callable[[Iterable[Any]], Iterable[Any]]) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """``body`` (a ``mapInArrow`` function) preceded by :func:`start_task` in the worker.

    ``body`` and what it captures must hold no reference cycle (see the module's docstring)."""

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        start_task()
        yield from body(batches)

    return run
