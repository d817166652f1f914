"""One on/off switch per kernel family for the optional numba backend, and when a kernel is worth loading.

Each family (:data:`DEDUP`, :data:`TOKENIZER`, :data:`BLEND`, :data:`TRAINING`, :data:`FILTER`, :data:`SPANS`) has
its own environment variable; ``VAR=0`` (or ``SWITCH.set(False)``) forces the pure Python/numpy path, which gives
identical results. numba is imported on first use only.

Compiling a family's kernels into an empty cache takes seconds, loading them from the cache a fraction of one:
more than a small input saves. So, unless forced on, a process runs the first ``PIPELINE_NUMBA_AFTER`` bytes of
input of each kernel (default 2 MB, ``0`` = compiled from the first call) through the Python path, and the
kernel from then on (:meth:`NumbaSwitch.use`); a call at least that large uses the kernel at once. The bundled
sample (1.2 M characters of documents) therefore compiles no dedup or encoder kernel, and a large run loses
little per kernel and process (figures: docs/benchmarks-history.md, Figures from the code). A kernel whose
Python path is nearly as fast passes its own, larger threshold (``use(kernel, size, after=...)``: the blend
lanes, the training sample index), and numba is not imported until a threshold is reached.
"""

from __future__ import annotations

import os

from pipeline.numba_cache import ensure_numba_cache_dir, install_locator

AFTER_VAR = "PIPELINE_NUMBA_AFTER"
DEFAULT_AFTER = 2_000_000  # bytes of input per kernel and process on the Python path before the kernel is used


def numba_after() -> int:
    """Bytes of input a kernel's Python path takes per process before the kernel is used (``PIPELINE_NUMBA_AFTER``)."""
    return int(os.environ.get(AFTER_VAR, DEFAULT_AFTER))


class NumbaSwitch:
    """Whether a kernel family uses numba: decided once per process, or forced with :meth:`set`."""

    def __init__(self, env_var: str) -> None:
        self.env_var = env_var
        self._enabled: bool | None = None
        self._forced = False
        self._seen: dict[str, int] = {}  # kernel -> bytes of input run through its Python path so far
        self._warm: set[str] = set()  # kernels this process uses from now on

    def importable(self) -> bool:
        """numba imports and the environment variable does not turn it off."""
        if os.environ.get(self.env_var, "1") == "0":
            return False
        ensure_numba_cache_dir()  # before numba reads its configuration
        try:
            import numba  # noqa: F401
        except ImportError:
            return False
        install_locator()  # a shipped cache's kernels, before any kernel module is imported
        return True

    def enabled(self) -> bool:
        """Whether the numba kernels are available to this family (see :meth:`use` for each call)."""
        if self._enabled is None:
            self._enabled = self.importable()
        return self._enabled

    def use(self, kernel: str, size: int, after: int | None = None) -> bool:
        """Whether this call of ``kernel`` on ``size`` bytes of input runs compiled (see the module doc).

        Always when forced on with :meth:`set`; otherwise once this process has run ``after`` (default
        :func:`numba_after`) bytes through the kernel's Python path, counting this call. numba is not
        imported before then."""
        if self._forced or self._enabled is False:
            return self.enabled()
        if kernel not in self._warm:
            seen = self._seen.get(kernel, 0) + size
            if seen < (numba_after() if after is None else after):
                self._seen[kernel] = seen
                return False
        if not self.enabled():
            return False
        self._warm.add(kernel)
        return True

    def set(self, enabled: bool | None) -> bool | None:
        """Force the backend (``True``: numba for every call, whatever its size; ``False``: never;
        ``None``: auto-detect again); returns the previous setting."""
        previous = self._enabled if self._forced or self._enabled is False else None
        self._forced = bool(enabled)
        self._enabled = (enabled and self.importable()) if enabled is not None else None
        return previous


DEDUP = NumbaSwitch("PIPELINE_DEDUP_NUMBA")  # MinHash signatures, shingle hashing (pipeline.dedup)
TOKENIZER = NumbaSwitch("PIPELINE_TOKENIZER_NUMBA")  # BPE encoding (pipeline.tokenizer)
BLEND = NumbaSwitch("PIPELINE_BLEND_NUMBA")  # the blending-index loop (pipeline.blend)
TRAINING = NumbaSwitch("PIPELINE_TRAINING_NUMBA")  # the sample-index loop (pipeline.training_indices)
FILTER = NumbaSwitch("PIPELINE_FILTER_NUMBA")  # fastText, Gopher repetition, FineWeb lines (pipeline.filter)
SPANS = NumbaSwitch("PIPELINE_SPANS_NUMBA")  # exact substrings' anchor groups (pipeline.spans)
