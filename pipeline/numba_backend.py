"""One on/off switch per kernel family for the optional numba backend.

Each family (:data:`DEDUP`, :data:`TOKENIZER`, :data:`BLEND`) has its own environment variable;
``VAR=0`` (or ``SWITCH.set(False)``) forces the pure Python/numpy path, which gives identical results.
numba is imported on first use only.
"""

from __future__ import annotations

import os

from pipeline.numba_cache import ensure_numba_cache_dir


class NumbaSwitch:
    """Whether a kernel family uses numba: decided once per process, or forced with :meth:`set`."""

    def __init__(self, env_var: str) -> None:
        self.env_var = env_var
        self._enabled: bool | None = None

    def importable(self) -> bool:
        """numba imports and the environment variable does not turn it off."""
        if os.environ.get(self.env_var, "1") == "0":
            return False
        ensure_numba_cache_dir()  # before numba reads its configuration
        try:
            import numba  # noqa: F401
        except ImportError:
            return False
        return True

    def enabled(self) -> bool:
        """Whether the numba kernels are used."""
        if self._enabled is None:
            self._enabled = self.importable()
        return self._enabled

    def set(self, enabled: bool | None) -> bool | None:
        """Force the backend (``None`` = auto-detect again); returns the previous setting."""
        previous = self._enabled
        self._enabled = (enabled and self.importable()) if enabled is not None else None
        return previous


DEDUP = NumbaSwitch("PIPELINE_DEDUP_NUMBA")  # MinHash signatures, shingle hashing (pipeline.dedup)
TOKENIZER = NumbaSwitch("PIPELINE_TOKENIZER_NUMBA")  # BPE encoding (pipeline.tokenizer)
BLEND = NumbaSwitch("PIPELINE_BLEND_NUMBA")  # the blending-index loop (pipeline.blend)
