"""The ``pipeline`` logger hierarchy and stage-step progress (one log line per step, Spark UI job names).

Every module logs through ``logging.getLogger("pipeline.<area>")``; the CLI or a job entry point calls
:func:`configure_logging` once, which gives the ``pipeline`` logger one handler writing to stderr
(time, level, logger name). Progress is one line per stage step with its counts and elapsed seconds,
never a redrawn bar: a driver log on Dataproc or EMR reads as a plain story.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LOG_LEVEL_ENV = "PIPELINE_LOG_LEVEL"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
JOB_DESCRIPTION = "spark.job.description"


class _StderrHandler(logging.StreamHandler):
    """A handler writing to whatever ``sys.stderr`` is at the time of the record (pytest's capture too)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # StreamHandler.__init__ assigns it; stderr is always looked up anew
        pass


def resolve_level(level: str | None = None) -> int:
    """``level`` (a name), else ``$PIPELINE_LOG_LEVEL``, else INFO; an unknown name is a ValueError."""
    name = (level or os.environ.get(LOG_LEVEL_ENV) or "INFO").strip().upper()
    if name not in LEVELS:
        raise ValueError(f"log level {name!r}: expected one of {', '.join(LEVELS)}")
    return getattr(logging, name)


def configure_logging(level: str | None = None) -> logging.Logger:
    """Give the ``pipeline`` logger its one stderr handler at ``level``; calling it again replaces it."""
    root = logging.getLogger("pipeline")
    for handler in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(handler)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT, datefmt="%Y-%m-%d %H:%M:%S"))
    root.addHandler(handler)
    root.setLevel(resolve_level(level))
    return root


def run_progress(message: str) -> None:
    """The runner's default progress sink: the ``pipeline.run`` logger, at WARNING for a warning message."""
    log = logging.getLogger("pipeline.run")
    (log.warning if "WARNING:" in message else log.info)(message)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def format_counts(counts: dict[str, Any]) -> str:
    """``a=1, b=2`` for the numeric counts of a step, plus totals over its per-source table (``sources``);
    text, flags, timings and other nested tables are left to the manifest and the report."""
    shown = {k: v for k, v in counts.items() if _number(v) and not k.startswith("seconds")}
    sources = counts.get("sources")
    if isinstance(sources, dict) and all(isinstance(row, dict) for row in sources.values()):
        for row in sources.values():
            for key, value in row.items():
                if _number(value) and key not in counts and not key.startswith("seconds"):
                    shown[key] = shown.get(key, 0) + value
    return ", ".join(f"{k}={v}" for k, v in shown.items())


def _spark_context(spark: Any) -> Any:
    return getattr(spark, "sparkContext", spark)


@contextmanager
def job_description(spark: Any, description: str) -> Iterator[None]:
    """Name the Spark jobs started inside the block (Spark UI, Dataproc console); the old name comes back after."""
    sc = _spark_context(spark)
    if sc is None:
        yield
        return
    previous = sc.getLocalProperty(JOB_DESCRIPTION)
    sc.setJobDescription(description)
    try:
        yield
    finally:
        sc.setLocalProperty(JOB_DESCRIPTION, previous)  # None removes the property


@contextmanager
def stage_jobs(ctx: Any, stage: str) -> Iterator[None]:
    """Name the Spark jobs of a stage after it, whether its Spark session is running or starts inside."""
    ctx.job_description = stage
    running = getattr(ctx, "_spark", None)
    try:
        if running is None:
            yield
        else:
            with job_description(running, stage):
                yield
    finally:
        ctx.job_description = None
        started = getattr(ctx, "_spark", None)
        if running is None and started is not None:  # Spark started inside the stage: clear the name it set
            _spark_context(started).setLocalProperty(JOB_DESCRIPTION, None)


class StepLog:
    """Steps of one stage: each names its Spark jobs while it runs and ends with one log line.

    ``begin("buckets")`` names the next Spark jobs ``"dedup: buckets"``; ``lap("buckets", edges=73)``
    records the step's seconds (since the previous lap) in :attr:`times` and logs them with the counts.
    """

    def __init__(self, stage: str, spark: Any = None) -> None:
        self.stage = stage
        self.times: dict[str, float] = {}
        self._sc = _spark_context(spark) if spark is not None else None
        self._log = logging.getLogger(f"pipeline.{stage.replace('-', '_')}")
        self._previous = self._sc.getLocalProperty(JOB_DESCRIPTION) if self._sc is not None else None
        self._last = time.time()

    def begin(self, step: str) -> None:
        """Spark jobs from here on carry ``"<stage>: <step>"`` as their description."""
        if self._sc is not None:
            self._sc.setJobDescription(f"{self.stage}: {step}")

    def lap(self, step: str, **counts: Any) -> None:
        """End ``step``: its seconds since the previous lap, logged with ``counts``."""
        now = time.time()
        self.times[step] = round(now - self._last, 3)
        self._last = now
        detail = format_counts(counts)
        self._log.info("%s: %s done in %.1f s%s", self.stage, step, self.times[step], f" ({detail})" if detail else "")

    def close(self) -> None:
        """Give the Spark jobs after this stage the description they had before it."""
        if self._sc is not None:
            self._sc.setLocalProperty(JOB_DESCRIPTION, self._previous)
