"""Peak RSS of a Spark application's driver and executors, each a process tree (JVM + its Python processes),
sampled with psutil in a background thread, and the CPU seconds they used (steadier than wall time on a
loaded machine).

A tree's figure is the sum of its processes' RSS at one instant; forked Python workers share pages with
their daemon, so the sum can overstate what the tree really holds (it is the upper bound a container limit
would see). Separately: the peak of the JVMs alone and of the Python processes alone.
"""

from __future__ import annotations

import os
import threading

import psutil

EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _split_rss(procs: list[psutil.Process], cpu: dict[int, float]) -> tuple[int, int]:
    """(JVM bytes, Python bytes) of ``procs`` now; processes that vanished count 0. Records each one's CPU
    seconds (user + system, its own) so far in ``cpu``."""
    jvm = python = 0
    for proc in procs:
        try:
            rss = proc.memory_info().rss
            name = proc.name()
            times = proc.cpu_times()
        except psutil.Error:
            continue
        cpu[proc.pid] = times.user + times.system
        if name.startswith("java"):
            jvm += rss
        elif name.startswith("python"):
            python += rss
    return jvm, python


class Peak:
    """Largest JVM, Python and total RSS of one tree seen so far."""

    def __init__(self) -> None:
        self.jvm = self.python = self.total = 0

    def add(self, jvm: int, python: int) -> None:
        self.jvm, self.python = max(self.jvm, jvm), max(self.python, python)
        self.total = max(self.total, jvm + python)

    def mib(self) -> dict[str, float]:
        return {k: round(v / 2**20, 1) for k, v in (("jvm", self.jvm), ("python", self.python), ("total", self.total))}


class TreeMemory:
    """Samples, every ``interval`` seconds, the tree under ``driver_pid`` and every executor JVM's tree (found
    by its main class; only those started by the ``workers`` pids when given, so another application's executors
    on the machine are left out); also the 1-minute load average."""

    def __init__(self, driver_pid: int, workers: set[int] | None = None, interval: float = 0.5) -> None:
        self.driver_pid, self.workers, self.interval = driver_pid, workers, interval
        self.driver = Peak()
        self.executors: dict[int, Peak] = {}
        self.driver_cpu: dict[int, float] = {}  # CPU seconds per process, as last seen
        self.executor_cpu: dict[int, float] = {}
        self.loads: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _executor_roots(self) -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["name", "cmdline"]):
            cmdline = proc.info.get("cmdline") or []
            if (proc.info.get("name") or "").startswith("java") and EXECUTOR_CLASS in cmdline:
                if self.workers is None or proc.ppid() in self.workers:
                    found.append(proc)
        return found

    def sample(self) -> None:
        """One sample of every tree."""
        try:
            driver = psutil.Process(self.driver_pid)
        except psutil.Error:
            return
        self.driver.add(*_split_rss(_tree(driver), self.driver_cpu))
        for root in self._executor_roots():
            self.executors.setdefault(root.pid, Peak()).add(*_split_rss(_tree(root), self.executor_cpu))
        self.loads.append(os.getloadavg()[0])

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def report(self) -> dict:
        """Peaks in MiB: the driver's and each executor's (in order of first sight); the CPU seconds of the
        driver's and of all executors' processes (as last sampled: a process's last interval is missed); the mean
        load."""
        return {
            "driver_cpu_s": round(sum(self.driver_cpu.values()), 1),
            "executors_cpu_s": round(sum(self.executor_cpu.values()), 1),
            "driver_mib": self.driver.mib(),
            "executors_mib": [peak.mib() for peak in self.executors.values()],
            "load_mean": round(sum(self.loads) / len(self.loads), 2) if self.loads else None,
        }
