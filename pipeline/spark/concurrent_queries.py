"""Small independent Spark queries of one step run side by side (threads of the driver), not one after another.

A query over a few thousand rows costs the driver its planning and a job or two per shuffle, tens of milliseconds each,
while the executors' cores wait; several such queries in a row add up (the dedup report runs four). Spark plans and
schedules queries of different threads at once. Each thread carries the caller's local properties (the job description
:class:`pipeline.logs.StepLog` sets), so the jobs keep their step's name in the logs and the event log.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pyspark.util import inheritable_thread_target


def run_concurrently(*calls: Callable[[], Any]) -> list[Any]:
    """The results of ``calls`` (functions running Spark queries), in their order, run in threads of their own;
    the first call's exception, if any, is raised once all have finished."""
    if len(calls) <= 1:
        return [call() for call in calls]
    with ThreadPoolExecutor(max_workers=len(calls), thread_name_prefix="pipeline-query") as pool:
        futures = [pool.submit(inheritable_thread_target(call)) for call in calls]
        return [future.result() for future in futures]
