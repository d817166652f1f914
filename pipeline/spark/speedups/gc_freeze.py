"""The ``gc_freeze`` speed-up: a task starts by freezing what earlier tasks of its reused Python worker left alive (on
when ``spark.speedups`` names it: :func:`pipeline.spark.worker_task.start_task`; its measured gain:
docs/benchmarks-history.md, Runtime speed-ups).

PySpark's daemon runs a full ``gc.collect()`` after every task, over everything the worker holds (modules, numba's
compiled kernels, pyarrow, a tokenizer, broadcast values). :func:`freeze_survivors` at the start of a task moves
what survived the previous task's collection out of the collector's sight for good, so the collection after this
task only walks this task's objects. Frozen objects are still freed by reference counting; only a reference cycle
among them is never collected. The freeze also catches the task's own command (the function Spark unpickled for
it), so that command must not be a reference cycle, or each task's copy is never freed: the pipeline's commands
are module functions, lambdas and ``functools.partial`` over plain values and broadcasts, and only those are
wrapped (:func:`pipeline.spark.worker_task.per_task`), never a user's function. Proven on a standalone cluster
(tests/e2e/test_cluster_worker_memory.py): over 1,000 tasks a worker's RSS and frozen objects stay flat, and a
user's Python or pandas UDF later in the same workers is unaffected.
"""

from __future__ import annotations

import gc


def freeze_survivors() -> None:
    """Freeze every object the collector tracks now (:func:`gc.freeze`)."""
    gc.freeze()
