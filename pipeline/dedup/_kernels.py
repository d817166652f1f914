"""Backend switch for the near-dedup kernels: numba when it imports, else pure numpy.

Both backends give identical results (tests run both and compare). numba is imported lazily, on
the first signature computed, so ``import pipeline.dedup`` stays cheap. Set the environment
variable ``PIPELINE_DEDUP_NUMBA=0`` (or call :func:`set_numba`) to force the numpy paths.
"""

from __future__ import annotations

from pipeline.numba_backend import NumbaSwitch

_switch = NumbaSwitch("PIPELINE_DEDUP_NUMBA")
numba_enabled = _switch.enabled
set_numba = _switch.set
