"""Backend switch for the near-dedup kernels: numba when it imports, else pure numpy.

Both backends give identical results (tests run both and compare). numba is imported lazily, on
the first signature computed, so ``import pipeline.dedup`` stays cheap. Set the environment
variable ``PIPELINE_DEDUP_NUMBA=0`` (or call :func:`set_numba`) to force the numpy paths.
"""

from __future__ import annotations

import os

_state: dict[str, bool | None] = {"enabled": None}


def _numba_importable() -> bool:
    if os.environ.get("PIPELINE_DEDUP_NUMBA", "1") == "0":
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def numba_enabled() -> bool:
    """Whether the numba kernels are used (decided once per process unless :func:`set_numba`)."""
    if _state["enabled"] is None:
        _state["enabled"] = _numba_importable()
    return bool(_state["enabled"])


def set_numba(enabled: bool | None) -> bool | None:
    """Force the backend (``None`` = auto-detect again); returns the previous setting."""
    previous = _state["enabled"]
    _state["enabled"] = (enabled and _numba_importable()) if enabled is not None else None
    return previous
