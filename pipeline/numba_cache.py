"""Where the ``cache=True`` numba kernels are cached: a writable directory chosen before numba is imported, or
the compiled kernels shipped with the job (``deploy/build_artifacts.sh --numba-cache``).

numba keeps compiled kernels next to their source (``__pycache__``) or, when that is not writable
(a ``--py-files`` zip, a read-only install), in the user cache ``$XDG_CACHE_HOME/numba`` (default
``~/.cache/numba``); when neither is writable the first call of a cached kernel fails. Executors often
run with a read-only or missing home, so when ``NUMBA_CACHE_DIR`` is unset and the user cache is not
writable, it is pointed at ``pipeline-numba-cache`` under the first writable of Spark's local
directory (``SPARK_LOCAL_DIRS``, YARN's ``LOCAL_DIRS``) and the temporary directory. Kernels imported
from a zip are cached by numba under the user cache whatever ``NUMBA_CACHE_DIR`` says, so
``XDG_CACHE_HOME`` (unwritable anyway in that case) is pointed at the same place. A fresh directory
only costs one compilation per process, as without a cache.

A shipped cache: numba files a kernel under a directory named after the absolute path of its source, and an
executor's copy of the ``--py-files`` zip lies under the application's and the executor's ids, so a cache
built elsewhere (or by the run before) is never found there. With ``PIPELINE_NUMBA_SHIPPED`` set (to the
directory the build wrote, e.g. unpacked by ``--archives numba-cache.tar.gz#numba-cache``; a relative path is
looked up in the working directory, then in Spark's files directory), the ``pipeline`` package's kernels are
filed instead under ``<shipped>/<digest>/<module>``, where ``<digest>`` is the SHA-256 of every ``.py`` file
of the package: the same sources find the same files wherever they were unpacked, and any other sources
(an edited checkout, another release) find none. numba itself checks the rest of each entry (its version,
the Python version, the CPU name and features, the kernel's bytecode), so a cache that does not match is
a miss: the kernel compiles as without it, into the same directory. A cache built for a CPU level
(``build_artifacts.sh --numba-cpu x86-64-v3``, the manifest's ``cpu_name``) makes numba compile for that
level on every machine that has its features, so one cache fits a mixed fleet. A shipped directory that is not
writable is copied once into the writable directory chosen as above. Without a shipped cache, the package
imported from a zip files its kernels the same way in the cache directory chosen as above, so that the
executors of the next application on the same machine find them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

CACHE_NAME = "pipeline-numba-cache"
SHIPPED_VAR = "PIPELINE_NUMBA_SHIPPED"  # the directory of a shipped cache (docs/running.md, Cluster and storage)
MANIFEST = "pipeline-numba-cache.json"  # written by the build beside the kernels: digest, Python, numba, CPU
PACKAGE = "pipeline"

# CPU targets a shipped cache may be built for besides the build machine's own CPU (numba keys every entry on
# the CPU name and features): LLVM's x86-64 levels, with the host features each needs, and ``generic``.
_V2 = ("cx16", "sahf", "popcnt", "sse4.1", "sse4.2", "ssse3")
_V3 = (*_V2, "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")
CPU_LEVELS: dict[str, tuple[str, ...]] = {
    "generic": (),
    "x86-64-v2": _V2,
    "x86-64-v3": _V3,
    "x86-64-v4": (*_V3, "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"),
}

_keyed: Path | None = None  # where this process files the package's kernels by digest (module doc), if anywhere


def _writable(directory: Path) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK | os.X_OK)


def user_cache_dir() -> Path:
    """numba's user-wide cache directory on Linux/macOS-like systems."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "numba"


def _local_cache_dir() -> Path | None:
    """``pipeline-numba-cache`` under the first writable of Spark's local directories and the temp dir."""
    candidates = [d for var in ("SPARK_LOCAL_DIRS", "LOCAL_DIRS") for d in os.environ.get(var, "").split(",") if d]
    for base in [*candidates, tempfile.gettempdir()]:
        directory = Path(base) / CACHE_NAME
        if _writable(directory / "numba"):
            return directory
    return None


def find_shipped() -> Path | None:
    """The shipped cache named by ``PIPELINE_NUMBA_SHIPPED`` (a directory holding the build's manifest), or None."""
    value = os.environ.get(SHIPPED_VAR)
    if not value:
        return None
    candidates = [Path(value)]
    if not candidates[0].is_absolute():
        # Spark's Python workers have loaded pyspark.files and set its root; a kernel module never imports Spark
        spark_files = getattr(sys.modules.get("pyspark.files"), "SparkFiles", None)
        root = getattr(spark_files, "_root_directory", None)
        if root:
            candidates.append(Path(root) / value)
    for candidate in candidates:
        if (candidate / MANIFEST).is_file():
            return candidate.resolve()
    return None


def read_manifest(directory: Path) -> dict[str, Any]:
    """The build's manifest of a shipped cache (empty when unreadable)."""
    try:
        found = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _use_shipped(shipped: Path) -> Path | None:
    """The shipped cache itself when writable, else a copy of it in the local cache directory."""
    if os.access(shipped, os.W_OK | os.X_OK):
        return shipped
    local = _local_cache_dir()
    if local is None:
        return None
    copy = local / f"shipped-{read_manifest(shipped).get('digest', 'unknown')[:16]}"
    if not copy.is_dir():
        partial = local / f".copying-{os.getpid()}"
        try:
            shutil.copytree(shipped, partial, dirs_exist_ok=True)
        except OSError:  # no room: compile as without a shipped cache
            shutil.rmtree(partial, ignore_errors=True)
            return None
        try:
            partial.rename(copy)
        except OSError:  # another process copied it first
            shutil.rmtree(partial, ignore_errors=True)
    return copy


def _adopt_cpu(name: str) -> None:
    """Compile for the shipped cache's CPU level (:data:`CPU_LEVELS`) when this machine has every feature it
    needs and numba's CPU is not set otherwise; a cache built for the build machine's own CPU sets nothing."""
    if name not in CPU_LEVELS or "NUMBA_CPU_NAME" in os.environ or "NUMBA_CPU_FEATURES" in os.environ:
        return
    if CPU_LEVELS[name]:
        try:
            import llvmlite.binding as ll  # type: ignore[import-untyped]

            host = ll.get_host_cpu_features()
        except (ImportError, RuntimeError):
            return
        if not all(host.get(feature) for feature in CPU_LEVELS[name]):
            return  # an older CPU: its own code, compiled here
    os.environ["NUMBA_CPU_NAME"] = name
    os.environ["NUMBA_CPU_FEATURES"] = ""  # the level's own features, not this machine's


def _from_zip() -> bool:
    """Whether the ``pipeline`` package is imported from a zip (``--py-files``)."""
    return ".zip" + os.sep in __file__  # this module sits in the package, zipped or not


def ensure_numba_cache_dir() -> str | None:
    """Use the shipped cache, or set ``NUMBA_CACHE_DIR`` when needed (see module doc); the directory set, or None."""
    global _keyed
    shipped = find_shipped()
    if shipped is not None:
        if _keyed is None:
            _keyed = _use_shipped(shipped)
        if _keyed is not None:
            _adopt_cpu(str(read_manifest(shipped).get("cpu_name", "")))
            return str(_keyed)
    chosen = None
    if not os.environ.get("NUMBA_CACHE_DIR") and not _writable(user_cache_dir()):
        directory = _local_cache_dir()
        if directory is not None:
            os.environ["XDG_CACHE_HOME"] = str(directory)
            os.environ["NUMBA_CACHE_DIR"] = chosen = str(directory / "numba")
    if _keyed is None and _from_zip():  # the next executor's copy of the zip finds what this one compiled
        keyed = Path(os.environ.get("NUMBA_CACHE_DIR") or user_cache_dir())
        _keyed = keyed if _writable(keyed) else None
    return chosen


def _package_sources() -> list[tuple[str, bytes]]:
    """Every ``.py`` file of the imported ``pipeline`` package (a directory or inside a zip), by relative path."""
    found: list[tuple[str, bytes]] = []

    def walk(node: Any, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            name = f"{prefix}{child.name}"
            if child.is_dir():
                if child.name != "__pycache__":
                    walk(child, name + "/")
            elif child.name.endswith(".py"):
                found.append((name, child.read_bytes()))

    walk(resources.files(PACKAGE), "")
    return found


@functools.lru_cache(maxsize=1)
def package_digest() -> str:
    """SHA-256 over the paths and contents of the package's ``.py`` files: the key of a shipped cache."""
    digest = hashlib.sha256()
    for name, data in _package_sources():
        digest.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _locator_class() -> type:
    """A numba cache locator filing the package's kernels under ``<shipped>/<digest>/<module>`` (module doc)."""
    from numba.core.caching import _CacheLocator

    class ShippedCacheLocator(_CacheLocator):
        """The package's kernels in the shipped cache, keyed by the package's sources, not their path."""

        def __init__(self, py_func: Any, path: Path, digest: str) -> None:
            self._lineno = py_func.__code__.co_firstlineno
            self._path, self._digest = path, digest

        def get_cache_path(self) -> str:
            return str(self._path)

        def get_source_stamp(self) -> str:
            return self._digest

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            module = getattr(py_func, "__module__", "") or ""
            if _keyed is None or not module.startswith(PACKAGE + "."):
                return None
            try:
                digest = package_digest()
                self = cls(py_func, _keyed / digest[:16] / module, digest)
                self.ensure_cache_path()
            except Exception:  # noqa: BLE001 - any trouble here: numba's own locators, as without a shipped cache
                return None
            return self

    return ShippedCacheLocator


def install_locator() -> None:
    """Put the shipped-cache locator first in numba's list (call after importing numba, before any kernel
    module); it answers only for the package's kernels, and only when a shipped cache is in use."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if isinstance(classes, list) and _locator_class() not in classes:
        classes.insert(0, _locator_class())
