"""One run at a time per output directory: ``<output>/_run.lock``.

* **Local directories**: the lock file is held with ``flock`` for the life of the process; the kernel
  drops it when the process ends, however it ends, so a killed run never leaves a lock that blocks
  the next one. The file's content (host, pid, since) only serves the refusal message.
* **gs:// and s3://**: the lock object is created with the store's conditional write (GCS
  ``ifGenerationMatch=0``, S3 ``If-None-Match: *``): of two runs starting together exactly one
  creates it. The holder rewrites its ``heartbeat`` every :data:`HEARTBEAT_SECONDS`; a lock whose
  heartbeat is older than :data:`STALE_SECONDS` was left by a killed run and is taken over, again by
  a conditional write on the generation (GCS) or ETag (S3) that was judged stale, so two runs cannot
  both take it over. ``--break-lock`` takes over a remote lock whatever its age.

The lock is released (file or object deleted) when the run ends, also on failure.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from pipeline import storage
from pipeline.config import ConfigError
from pipeline.errors import PipelineError
from pipeline.storage.conditional import NoConditionalWrite, create_if_absent, read_versioned, replace_if_version

LOCK_NAME = "_run.lock"
HEARTBEAT_SECONDS = 60.0
STALE_SECONDS = 600.0
log = logging.getLogger("pipeline.lock")


class RunLockedError(PipelineError):
    """Another run holds the output directory."""


def _stamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _holder_text(holder: dict[str, Any]) -> str:
    return f"host {holder.get('host', '?')} pid {holder.get('pid', '?')} since {_stamp(float(holder.get('since', 0)))}"


class RunLock:
    """The lock of one run directory; use as a context manager or call :meth:`acquire`/:meth:`release`."""

    def __init__(
        self,
        run_dir: str,
        command: str = "run",
        *,
        stale_seconds: float = STALE_SECONDS,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
    ) -> None:
        self.run_dir = run_dir
        self.path = storage.join(run_dir, LOCK_NAME)
        self.stale_seconds = stale_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.holder = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "since": time.time(),
            "command": command,
            "token": uuid.uuid4().hex,
        }
        self.took_over: dict[str, Any] | None = None  # the stale holder replaced, if any
        self._fd: int | None = None
        self._version: str | None = None  # generation (GCS) or ETag (S3) of our lock object
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self.lost = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self, break_lock: bool = False) -> None:
        """Take the lock or raise :class:`RunLockedError` naming the holder; ConfigError if output is unusable."""
        if storage.is_local(self.path):
            self._acquire_local()
        else:
            self._acquire_remote(break_lock)
        if self.took_over:
            log.warning(
                "took over the lock of %s left by a run that ended without releasing it (%s)",
                self.run_dir,
                _holder_text(self.took_over),
            )

    def release(self) -> None:
        """Drop the lock (idempotent). It never raises: the lock is always given up, and a lock file that cannot be
        removed (the output became unwritable) is logged, so the error that ended the run is the one reported."""
        if self._fd is not None:
            import fcntl

            try:
                os.unlink(self._local_path())
            except FileNotFoundError:
                pass
            except OSError as exc:  # the flock below is what holds the lock: a file left behind blocks no one
                log.warning("could not remove the run lock %s (%s); the lock itself is released", self.path, exc)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        if self._version is not None:
            self._stop.set()
            if self._beat is not None:
                self._beat.join()
            if not self.lost:
                try:
                    fs, inner = storage.resolve(self.path)
                    fs.rm_file(inner)
                except FileNotFoundError:
                    pass
                except Exception as exc:  # noqa: BLE001 - its heartbeat stops: the next run takes it over when stale
                    log.warning(
                        "could not remove the run lock %s (%s); it stops beating and the next run takes it over "
                        "after %d s (or --break-lock)",
                        self.path,
                        exc,
                        self.stale_seconds,
                    )
            self._version = None

    # ------------------------------------------------------------------ local
    def _local_path(self) -> str:
        return self.path[len("file://") :] if self.path.startswith("file://") else self.path

    def _acquire_local(self) -> None:
        import fcntl

        directory = os.path.dirname(os.path.abspath(self._local_path()))
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise ConfigError("output", f"{self.run_dir!r} is an existing file, not a directory")
        try:
            os.makedirs(directory, exist_ok=True)
            while True:
                fd = os.open(self._local_path(), os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    raise RunLockedError(self._refusal(self._read_local())) from None
                try:  # the holder we waited for may have deleted the file: lock the current one
                    same = os.stat(self._local_path()).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    break
                os.close(fd)
        except OSError as exc:  # not a directory, read-only, permission denied
            raise ConfigError("output", f"cannot write to {self.run_dir!r}: {exc.strerror or exc}") from None
        previous = os.read(fd, 1 << 16)
        if previous.strip():
            self.took_over = _parse(previous)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(self.holder).encode(), 0)
        self._fd = fd

    def _read_local(self) -> dict[str, Any]:
        for _ in range(20):  # the holder may be writing its details right now
            try:
                with open(self._local_path(), "rb") as f:
                    holder = _parse(f.read())
            except FileNotFoundError:
                holder = {}
            if holder:
                return holder
            time.sleep(0.05)
        return {}

    def _refusal(self, holder: dict[str, Any], remote: str = "") -> str:
        return (
            f"output {self.run_dir!r} is locked by another run ({_holder_text(holder)}{remote}); wait for it "
            f"to finish or use another output directory"
        )

    # ----------------------------------------------------------------- remote
    def _acquire_remote(self, break_lock: bool) -> None:
        try:
            self._version = _create(self.path, self._body())
        except FileExistsError:
            pass
        else:
            self._start_heartbeat()
            return
        holder, version = _read_remote(self.path)
        age = time.time() - float(holder.get("heartbeat", 0))
        if not break_lock and age < self.stale_seconds:
            raise RunLockedError(
                self._refusal(
                    holder,
                    f", heartbeat {age:.0f} s ago; a lock without a heartbeat "
                    f"for {self.stale_seconds:.0f} s is taken over, or pass --break-lock",
                )
            )
        try:
            self._version = _replace(self.path, self._body(), version)
        except FileExistsError:  # another run took it over between our read and our write
            holder, _ = _read_remote(self.path)
            raise RunLockedError(self._refusal(holder)) from None
        self.took_over = holder
        self._start_heartbeat()

    def _body(self) -> bytes:
        return json.dumps({**self.holder, "heartbeat": time.time()}).encode()

    def _start_heartbeat(self) -> None:
        self._beat = threading.Thread(target=self._heartbeat_loop, name="run-lock-heartbeat", daemon=True)
        self._beat.start()

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(self.heartbeat_seconds):
            try:
                self._version = _replace(self.path, self._body(), self._version)
            except FileExistsError:
                self.lost = True
                log.error(
                    "the lock of %s was taken over by another run; this run's outputs may be overwritten", self.run_dir
                )
                return
            except Exception as exc:  # noqa: BLE001 - a failed heartbeat is retried at the next beat
                log.warning("lock heartbeat failed: %s", exc)


def _parse(data: bytes) -> dict[str, Any]:
    try:
        holder = json.loads(data)
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _create(url: str, data: bytes) -> str:
    """Write ``url`` only if it does not exist (FileExistsError otherwise); the object's version."""
    try:
        return create_if_absent(url, data)
    except NoConditionalWrite:
        raise ConfigError(
            "output",
            f"{url.split('://', 1)[0]}:// has no conditional write; use a local path, "
            "gs:// or s3:// for the run directory",
        ) from None


_replace = replace_if_version  # overwrite only if still at the version read (FileExistsError otherwise)


def _read_remote(url: str) -> tuple[dict[str, Any], str]:
    """The lock object's content and its version (generation or ETag)."""
    data, version = read_versioned(url)
    return _parse(data), version
