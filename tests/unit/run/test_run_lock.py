"""One run at a time per output directory (issue 14, item 8): local flock; conditional writes on the GCS and
S3 emulators (fake-gcs-server honours ifGenerationMatch on uploads, moto honours If-None-Match / If-Match)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipeline.run.runlock import LOCK_NAME, RunLock, RunLockedError, _read_remote, _replace
from tests.storage_fixtures import new_bucket

REPO = Path(__file__).resolve().parents[3]
HOLD = (
    "import sys, time; from pipeline.run.runlock import RunLock; RunLock(sys.argv[1], 'run').acquire(); "
    "print('held', flush=True); time.sleep(120)"
)


def _holder(out: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_run_refuses_at_once_naming_the_holder_then_takes_over_after_a_kill(tmp_path, monkeypatch, capsys):
    from pipeline.cli.commands import main

    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    proc = _holder(out)
    try:
        code = main(["run", "--config", "conf/local.yaml", "--set", f"output={out}"])
        err = capsys.readouterr().err.strip()
        assert code == 1 and err.count("\n") == 0, err
        assert "locked by another run" in err and f"pid {proc.pid}" in err
        assert f"host {socket.gethostname()}" in err and "since 20" in err
        assert not (out / "_stages").exists() and not (out / "manifest.json").exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert json.loads((out / LOCK_NAME).read_text())["pid"] == proc.pid  # a killed run leaves its file
    lock = RunLock(str(out))
    lock.acquire()
    assert lock.took_over is not None and lock.took_over["pid"] == proc.pid
    assert json.loads((out / LOCK_NAME).read_text())["pid"] == os.getpid()
    lock.release()
    assert not (out / LOCK_NAME).exists()


def test_two_locks_in_one_process_exclude_each_other_and_release_frees(tmp_path):
    first = RunLock(str(tmp_path / "run"))
    first.acquire()
    with pytest.raises(RunLockedError, match=f"pid {os.getpid()}"):
        RunLock(str(tmp_path / "run")).acquire()
    first.release()
    with RunLock(str(tmp_path / "run")) as again:
        assert again.took_over is None


def test_many_local_contenders_one_winner(tmp_path):
    out = str(tmp_path / "run")
    winners, refused, barrier = [], [], threading.Barrier(8)

    def contend() -> None:
        lock = RunLock(out)
        barrier.wait()
        try:
            lock.acquire()
            winners.append(lock)
        except RunLockedError:
            refused.append(lock)

    threads = [threading.Thread(target=contend) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1 and len(refused) == 7
    winners[0].release()


@pytest.fixture(params=["gs", "s3"])
def bucket(request) -> str:
    request.getfixturevalue("gcs_emulator" if request.param == "gs" else "s3_emulator")
    return new_bucket(request.param)


def test_remote_lock_is_created_conditionally_one_winner_among_contenders(bucket):
    out = f"{bucket}/runs/x"
    winners, refused, barrier = [], [], threading.Barrier(6)

    def contend() -> None:
        lock = RunLock(out, heartbeat_seconds=3600)
        barrier.wait()
        try:
            lock.acquire()
            winners.append(lock)
        except RunLockedError as exc:
            refused.append(str(exc))

    threads = [threading.Thread(target=contend) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1 and len(refused) == 5, refused
    assert all("locked by another run" in r and "heartbeat" in r and "--break-lock" in r for r in refused)
    holder, _ = _read_remote(f"{out}/{LOCK_NAME}")
    assert holder["token"] == winners[0].holder["token"]
    winners[0].release()
    import fsspec

    fs, path = fsspec.core.url_to_fs(f"{out}/{LOCK_NAME}")
    fs.invalidate_cache()
    assert not fs.exists(path)


def test_remote_stale_lock_is_taken_over_once_and_a_fresh_one_is_not(bucket):
    import fsspec

    out = f"{bucket}/runs/y"
    url = f"{out}/{LOCK_NAME}"
    fs, path = fsspec.core.url_to_fs(url)
    old = {"host": "dead-host", "pid": 4242, "since": time.time() - 7200, "heartbeat": time.time() - 3600}
    fs.pipe_file(path, json.dumps(old).encode())
    _, stale_version = _read_remote(url)
    lock = RunLock(out, stale_seconds=600, heartbeat_seconds=3600)
    lock.acquire()
    assert lock.took_over["host"] == "dead-host"
    with pytest.raises(FileExistsError):  # a second contender that judged the same version stale loses
        _replace(url, b"{}", stale_version)
    with pytest.raises(RunLockedError, match="host .* pid"):
        RunLock(out, stale_seconds=600).acquire()
    broken = RunLock(out, heartbeat_seconds=3600)
    broken.acquire(break_lock=True)  # explicit --break-lock takes even a fresh lock
    assert broken.took_over["token"] == lock.holder["token"]
    broken.release()
    lock._stop.set()


def test_remote_heartbeat_advances_and_a_lost_lock_is_noticed(bucket):
    out = f"{bucket}/runs/z"
    url = f"{out}/{LOCK_NAME}"
    lock = RunLock(out, heartbeat_seconds=0.3)
    lock.acquire()
    try:
        first, _ = _read_remote(url)
        time.sleep(1.5)
        later, _ = _read_remote(url)
        assert later["heartbeat"] > first["heartbeat"] and later["token"] == lock.holder["token"]
        for _attempt in range(20):  # another run breaks the lock (retried if a heartbeat lands in between)
            _, version = _read_remote(url)
            try:
                _replace(url, json.dumps({"host": "other", "pid": 1, "since": 0, "heartbeat": 1e12}).encode(), version)
                break
            except FileExistsError:
                continue
        deadline = time.time() + 10
        while not lock.lost and time.time() < deadline:
            time.sleep(0.1)
        assert lock.lost
    finally:
        lock.release()
    holder, _ = _read_remote(url)  # a run that lost its lock does not delete the new holder's
    assert holder["host"] == "other"


def test_an_unwritable_output_does_not_mask_the_error_that_ended_the_run(tmp_path, monkeypatch, capsys):
    """The output turned unwritable mid-run: the lock file cannot be removed, yet the error reported is the run's
    own (``Mkdirs failed``), the lock is given up, and a warning says what was left behind (issue #28, 10)."""
    from pipeline.cli import commands
    from pipeline.errors import PipelineError
    from tests.config_texts import config_text, write_jsonl

    config = tmp_path / "c.yaml"
    config.write_text(config_text(write_jsonl(tmp_path), output=str(tmp_path / "run")))

    def failing_run(*args, **kwargs):
        def refuse(path):
            raise PermissionError(13, "Permission denied", path)

        monkeypatch.setattr(os, "unlink", refuse)
        raise PipelineError("Mkdirs failed to create file:/out/dedup/edges")

    monkeypatch.setattr(commands, "run_stages", failing_run)
    code = commands.main(["dedup", "--config", str(config)])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and errors == ["error: Mkdirs failed to create file:/out/dedup/edges"], err
    assert "WARNING pipeline.lock: could not remove the run lock" in err
    monkeypatch.undo()
    with RunLock(str(tmp_path / "run")) as again:  # the flock was given up: the file left behind blocks no one
        assert again.took_over is not None and again.took_over["command"] == "dedup"
