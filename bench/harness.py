"""Shared pieces of the Spark benchmarks: corpora on disk, a local[2] session, peak-memory sampling."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psutil

T = TypeVar("T")

DATA = Path(os.environ.get("PIPELINE_BENCH_DATA", "/tmp/pipeline-bench"))


def corpus(megabytes: float, seed: int = 0) -> Path:
    """A JSONL corpus of about ``megabytes`` MB of text, generated once and cached under DATA."""
    from corpus import jsonl_of_size

    return jsonl_of_size(DATA / f"corpus-{megabytes:g}mb-{seed}.jsonl", megabytes, seed)


def session(master: str = "local[2]"):
    """A local SparkSession like the tests' (UI off), with quiet logs."""
    from pipeline.spark.session import build_session

    spark = build_session(
        "pipeline-bench",
        master=master,
        settings={
            "spark.sql.shuffle.partitions": "8",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": "4g",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sparkContext.setCheckpointDir(str(DATA / "checkpoints"))
    return spark


class PeakMemory:
    """Samples the RSS of this process (the Python driver) and of its JVM child every 50 ms."""

    def __init__(self) -> None:
        self.python = 0
        self.jvm = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            self.python = max(self.python, me.memory_info().rss)
            jvm = sum(c.memory_info().rss for c in me.children(recursive=True) if "java" in c.name())
            self.jvm = max(self.jvm, jvm)
            time.sleep(0.05)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def config_text(raw: Path, out: Path, extra: str = "") -> str:
    """A one-source pipeline config over ``raw`` (JSONL) writing to ``out``."""
    return f"""
output: {out}
sources: [{{name: bench, paths: ["{raw}"]}}]
tokenizer: {{train: true, vocab_size: 2000, sample_fraction: 0.1}}
tokenize: {{partitions: 8}}
{extra}
"""


def best_cpu_seconds(fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    """Least CPU seconds of this process over ``repeat`` calls of ``fn``, and the last call's result."""
    best, result = float("inf"), None
    for _ in range(max(1, repeat)):
        started = time.process_time()
        result = fn()
        best = min(best, time.process_time() - started)
    return best, result  # type: ignore[return-value]
