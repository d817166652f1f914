"""A writable on-disk cache for the ``cache=True`` numba kernels, chosen before numba is imported.

numba keeps compiled kernels next to their source (``__pycache__``) or, when that is not writable
(a ``--py-files`` zip, a read-only install), in the user cache ``$XDG_CACHE_HOME/numba`` (default
``~/.cache/numba``); when neither is writable the first call of a cached kernel fails. Executors often
run with a read-only or missing home, so when ``NUMBA_CACHE_DIR`` is unset and the user cache is not
writable, it is pointed at ``pipeline-numba-cache`` under the first writable of Spark's local
directory (``SPARK_LOCAL_DIRS``, YARN's ``LOCAL_DIRS``) and the temporary directory. Kernels imported
from a zip are cached by numba under the user cache whatever ``NUMBA_CACHE_DIR`` says, so
``XDG_CACHE_HOME`` (unwritable anyway in that case) is pointed at the same place. A fresh directory
only costs one compilation per process, as without a cache.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

CACHE_NAME = "pipeline-numba-cache"


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


def ensure_numba_cache_dir() -> str | None:
    """Set ``NUMBA_CACHE_DIR`` when needed (see module doc); returns the directory set, or None."""
    if os.environ.get("NUMBA_CACHE_DIR") or _writable(user_cache_dir()):
        return None
    candidates = [d for var in ("SPARK_LOCAL_DIRS", "LOCAL_DIRS") for d in os.environ.get(var, "").split(",") if d]
    for base in [*candidates, tempfile.gettempdir()]:
        directory = Path(base) / CACHE_NAME
        if _writable(directory / "numba"):
            os.environ["XDG_CACHE_HOME"] = str(directory)
            os.environ["NUMBA_CACHE_DIR"] = str(directory / "numba")
            return str(directory / "numba")
    return None
