"""The whole run on a real multi-process Spark cluster: a standalone master and two one-core workers from
the pyspark distribution, all on 127.0.0.1, the job submitted with ``--master spark://...`` and the zip.

Executors here are separate JVMs with their own working directories, started by the workers, so whatever
assumes the driver and the executors share a process, a working directory or memory breaks here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.spark.tables import STORE_ENV
from tests.cluster_runs import (
    REPO,
    SPARK_BIN,
    child_env,
    file_digests,
    package_origin,
    require_spark_submit,
    submit_job,
    write_standalone_config,
)
from tests.oracles import missing_tool
from tests.run_files import run_contents
from tests.storage_fixtures import new_bucket

pytestmark = [pytest.mark.spark, pytest.mark.slow]
SPARK_CLASS = SPARK_BIN / "spark-class"
START_TIMEOUT_S = 240


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the daemon's process group, SIGKILL if it does not end."""
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


class StandaloneCluster:
    """A Spark standalone master and its workers, each a ``spark-class`` daemon in its own process group."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.webui_port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[tuple[str, subprocess.Popen, Path]] = []
        self.env = child_env(root)
        self.env["SPARK_DAEMON_MEMORY"] = "384m"

    def _start(self, name: str, args: list[str], extra_env: dict[str, str] | None = None) -> None:
        log = self.root / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(SPARK_CLASS), *args],
                cwd=self.root,
                env={**self.env, **(extra_env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append((name, proc, log))

    def start(self, workers: int) -> None:
        self._start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.webui_port),
            ],
        )
        self._wait(lambda state: state is not None, "the master's web UI")
        for i in range(workers):
            work_dir = self.root / f"worker{i}"
            work_dir.mkdir()
            self._start(
                f"worker{i}",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    self.url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "1g",
                    "--webui-port",
                    "0",
                    "--work-dir",
                    str(work_dir),
                ],
                {"SPARK_WORKER_DIR": str(work_dir)},
            )
        self._wait(
            lambda state: state is not None and self.alive_workers(state) == workers, f"{workers} registered workers"
        )

    def state(self) -> dict | None:
        """The master's JSON status, or None while it is not serving."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=5) as response:
                return json.load(response)
        except OSError:
            return None

    @staticmethod
    def alive_workers(state: dict) -> int:
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for name, proc, log in self.procs:
                if proc.poll() is not None:
                    pytest.fail(f"{name} exited with {proc.returncode} before {what}:\n{log.read_text()[-3000:]}")
            if ready(self.state()):
                return
            time.sleep(1)
        logs = "\n".join(f"--- {name}\n{log.read_text()[-1500:]}" for name, _, log in self.procs)
        pytest.fail(f"no {what} after {START_TIMEOUT_S} s:\n{logs}")

    def stop(self) -> None:
        for _, proc, _ in reversed(self.procs):
            _stop(proc)


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory) -> Iterator[StandaloneCluster]:
    """A master and two workers (1 core, 1g each) on 127.0.0.1 for this file's tests, always stopped afterwards.

    The daemons get no object-store settings (:data:`STORE_ENV`): executors must receive them from the driver."""
    require_spark_submit()
    if not SPARK_CLASS.exists():
        missing_tool(f"pyspark's spark-class not found at {SPARK_CLASS}")
    cluster = StandaloneCluster(tmp_path_factory.mktemp("cluster"))
    for name in STORE_ENV:
        cluster.env.pop(name, None)
    try:
        cluster.start(workers=2)
        yield cluster
    finally:
        cluster.stop()
    assert all(proc.poll() is not None for _, proc, _ in cluster.procs)


def test_whole_run_on_a_standalone_cluster_matches_a_local_run(
    standalone_cluster: StandaloneCluster, cluster_zip: Path, local_reference_run: Path, tmp_path: Path
) -> None:
    """``spark-submit --master spark://127.0.0.1:P --py-files <zip> job_pipeline.py``: executors on both
    workers, megatron/ and blend/ byte-identical to the local run.

    The config's input paths and the output are relative to the directory the job starts from, as in
    ``conf/local.yaml``: executors run elsewhere (``<work-dir>/<app>/<executor>/``), so this only works
    when the driver anchors them (pipeline.config.load).
    """
    before = _app_ids(standalone_cluster)
    workdir = tmp_path / "user-dir"
    shutil.copytree(REPO / "pipeline" / "sample", workdir / "sample")
    relative_config = write_standalone_config(tmp_path / "conf", sample_root=".")
    out = workdir / "run"
    done = submit_job(
        "run",
        cluster_zip,
        relative_config,
        Path("run"),
        tmp_path / "submit",
        master=standalone_cluster.url,
        workdir=workdir,
        extra_args=(
            "--executor-memory",
            "512m",
            "--total-executor-cores",
            "2",
            "--conf",
            "spark.executor.cores=1",
            "--conf",
            "spark.driver.host=127.0.0.1",
        ),
    )
    assert package_origin(done).startswith(str(cluster_zip) + os.sep)
    assert f"outputs in {out}" in done.stdout

    state = standalone_cluster.state()
    assert state is not None
    apps = [a for a in state.get("completedapps", []) + state.get("activeapps", []) if a["id"] not in before]
    assert len(apps) == 1, apps
    # Each worker started an executor for the application: <work-dir>/<app-id>/<executor-id>/.
    app_id = apps[0]["id"]
    for i in range(2):
        executors = list((standalone_cluster.root / f"worker{i}" / app_id).iterdir())
        assert executors, f"worker{i} ran no executor for {app_id}"

    assert file_digests(out) == file_digests(local_reference_run)


def _app_ids(cluster: StandaloneCluster) -> set[str]:
    state = cluster.state() or {}
    return {a["id"] for a in state.get("completedapps", []) + state.get("activeapps", [])}


CLUSTER_ARGS = (
    "--executor-memory",
    "512m",
    "--total-executor-cores",
    "2",
    "--conf",
    "spark.executor.cores=1",
    "--conf",
    "spark.driver.host=127.0.0.1",
)


# the gs:// case runs the same plans as the s3:// one; only the fsspec backend differs (CONTRIBUTING.md, Spark 4)
@pytest.mark.parametrize("scheme", ["s3", pytest.param("gs", marks=pytest.mark.same_plan)])
def test_a_run_into_an_object_store_without_a_connector_matches_a_local_run(
    scheme: str,
    request: pytest.FixtureRequest,
    standalone_cluster: StandaloneCluster,
    cluster_zip: Path,
    standalone_config: Path,
    local_reference_run: Path,
    tmp_path: Path,
) -> None:
    """The run directory in a bucket (moto's S3, fake-gcs-server) that Spark's Hadoop cannot write: executors on
    the workers write and read the tables directly (pipeline.spark.direct_tables), with the store's settings from
    the driver alone. Every table holds the local run's rows; every other file is the local run's."""
    request.getfixturevalue("s3_emulator" if scheme == "s3" else "gcs_emulator")
    run = f"{new_bucket(scheme)}/runs/r1"
    done = submit_job(
        "run", cluster_zip, standalone_config, run, tmp_path / "submit", master=standalone_cluster.url,
        extra_args=CLUSTER_ARGS,
    )  # fmt: skip
    assert "tables: direct" in done.stdout + done.stderr
    remote, local = run_contents(run), run_contents(str(local_reference_run))
    assert not [n for n in remote if "_attempts" in n or "_tmp" in n], sorted(remote)
    assert sorted(remote) == sorted(local)
    assert [k for k in local if k.endswith("/") and local[k]], "the reference has tables with rows"
    differing = [name for name in sorted(local) if remote[name] != local[name]]
    assert not differing, [(name, remote[name], local[name]) for name in differing][:3]
