"""A Spark standalone master and workers on 127.0.0.1 from pyspark's ``spark-class``, for benches and cluster tests;
each daemon in its own process group, stopped by it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from bench.harness import REPO, ProcessTree, run_logged

SPARK_BIN = Path(sys.executable).parent  # the venv's spark-class and spark-submit (pyspark's launchers)
START_TIMEOUT_S = 240


def build_zip(out: Path, numba_cache: bool = False) -> Path:
    """``deploy/build_artifacts.sh --zip-only`` (``--numba-cache``) into ``out``, as a user runs it."""
    cmd = ["bash", str(REPO / "deploy" / "build_artifacts.sh"), "--out", str(out), "--zip-only"]
    cmd += ["--python", sys.executable, *(["--numba-cache"] if numba_cache else [])]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"build_artifacts.sh failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return out


def submit_command(cluster: Cluster, dist: Path, config: Path, memory: str, extra: tuple[str, ...] = ()) -> list[str]:
    """``spark-submit`` of ``jobs/job_pipeline.py --config config`` to ``cluster`` as a user submits it."""
    cmd = [str(SPARK_BIN / "spark-submit"), "--master", cluster.url, "--driver-memory", memory]
    cmd += ["--executor-memory", memory, "--total-executor-cores", str(cluster.workers * cluster.cores)]
    cmd += ["--conf", f"spark.executor.cores={cluster.cores}", "--conf", "spark.driver.host=127.0.0.1"]
    cmd += ["--py-files", str(dist / "pretrain_pipeline.zip"), *extra]
    return [*cmd, str(REPO / "jobs" / "job_pipeline.py"), "--config", str(config)]


def cluster_config(app: str, out: Path, sources: list[dict], settings: dict[str, str], **sections: Any) -> dict:
    """A run's config: ``sources`` into ``out``, UI off, the clusters' task-side speed-ups, then ``sections``."""
    settings = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", **settings}
    spark = {"app_name": app, "settings": settings, "speedups": ["zip_rescans", "gc_freeze"]}  # as conf/dataproc.yaml
    return {"output": str(out), "spark": spark, "sources": sources, **sections}


def run_job(
    cluster: Cluster,
    dist: Path,
    config: dict,
    path: Path,
    memory: str,
    extra: tuple[str, ...] = (),
    tree: Callable[[int], Any] = ProcessTree,
) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """``config`` written to ``path`` and spark-submitted to ``cluster`` (its output removed first, the log beside
    ``path``), sampled by ``tree(pid)``: the run (harness.run_logged), the tree and the run's report.json."""
    shutil.rmtree(config["output"], ignore_errors=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    cmd = submit_command(cluster, dist, path, memory, extra)
    run, sampled = run_logged(cmd, path.with_suffix(".log"), cluster.env, path.parent, tree)
    return run, sampled, json.loads((Path(config["output"]) / "report.json").read_text())


def free_port() -> int:
    """A TCP port on 127.0.0.1 the OS says is free."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spark_env(root: Path) -> dict[str, str]:
    """The daemons' and jobs' environment: this interpreter, nothing from the checkout (no PYTHONPATH, SPARK_HOME)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "SPARK_CONF_DIR")}
    env |= {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    env["SPARK_LOCAL_DIRS"] = str(root / "spark-local")
    (root / "spark-local").mkdir(parents=True, exist_ok=True)
    return env


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the daemon's process group, then SIGKILL."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    except ProcessLookupError:
        pass


class Cluster:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` for executors each."""

    def __init__(self, root: Path, workers: int = 2, cores: int = 1, memory: str = "2g") -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.workers, self.cores, self.memory = workers, cores, memory
        self.port, self.webui_port = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.env = {**spark_env(root), "SPARK_DAEMON_MEMORY": "384m"}
        self.procs: list[tuple[str, subprocess.Popen, Path]] = []

    def worker_dir(self, i: int) -> Path:
        return self.root / f"worker{i}"

    def _start(self, name: str, args: list[str], extra_env: dict[str, str] | None = None) -> None:
        log, cmd = self.root / f"{name}.log", [str(SPARK_BIN / "spark-class"), *args]
        env = {**self.env, **(extra_env or {})}
        with log.open("wb") as out:  # a process group of its own, stopped as one
            proc = subprocess.Popen(
                cmd, cwd=self.root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.procs.append((name, proc, log))

    def start(self) -> None:
        """Start the master, then the workers, until every worker is ALIVE."""
        master = ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port)]
        self._start("master", [*master, "--webui-port", str(self.webui_port)])
        self._wait(lambda state: state is not None, "the master's status page")
        for i in range(self.workers):
            self.worker_dir(i).mkdir(exist_ok=True)
            args = ["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1"]
            args += ["--cores", str(self.cores), "--memory", self.memory, "--webui-port", "0"]
            work_dir = str(self.worker_dir(i))
            self._start(f"worker{i}", [*args, "--work-dir", work_dir], {"SPARK_WORKER_DIR": work_dir})
        self._wait(lambda state: state is not None and self.alive(state) == self.workers, "every worker alive")

    def state(self) -> dict | None:
        """The master's JSON status, or None while it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=5) as response:
                return dict(json.load(response))
        except OSError:
            return None

    @staticmethod
    def alive(state: dict) -> int:
        """Workers the master lists as ALIVE."""
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def _wait(self, ready: Callable[[dict | None], bool], what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for name, proc, log in self.procs:
                if proc.poll() is not None:
                    tail = log.read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"{name} exited with {proc.returncode} before {what}; {log}:\n{tail}")
            if ready(self.state()):
                return
            time.sleep(1)
        logs = "\n".join(f"--- {name}\n{log.read_text(errors='replace')[-1500:]}" for name, _, log in self.procs)
        raise RuntimeError(f"no {what} after {START_TIMEOUT_S} s; logs in {self.root}:\n{logs}")

    def app_ids(self) -> set[str]:
        """The ids of the applications the master has seen."""
        state = self.state()
        if state is None:
            raise RuntimeError(f"the master at {self.url} stopped serving its status")
        return {app["id"] for app in state.get("completedapps", []) + state.get("activeapps", [])}

    def executor_dirs(self, app_id: str) -> list[list[Path]]:
        """Per worker, its executor directories for ``app_id``."""
        dirs = [self.worker_dir(i) / app_id for i in range(self.workers)]
        return [list(app_dir.iterdir()) if app_dir.is_dir() else [] for app_dir in dirs]

    def pids(self) -> set[int]:
        """The daemons' process ids (not their executors')."""
        return {proc.pid for _, proc, _ in self.procs}

    def stop(self) -> None:
        """Stop every daemon, workers first."""
        for _, proc, _ in reversed(self.procs):
            _stop(proc)

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
