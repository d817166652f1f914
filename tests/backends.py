"""Run a kernel family on a chosen backend (numba or the pure numpy/Python fallback), checked, for comparisons.

``SWITCH.set(True)`` quietly stays on the fallback when numba does not import or the family's environment
variable is ``0``; a comparison made that way would compare the fallback with itself. :func:`numba_backend`
forces the backend through the family's own switch and asserts it took.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from pipeline.numba_backend import NumbaSwitch
from tests.oracles import not_applicable, require_oracle


@contextmanager
def numba_backend(switch: NumbaSwitch, numba: bool) -> Iterator[None]:
    """Within the block, the family of ``switch`` (``pipeline.numba_backend.DEDUP``, ``BLEND``, ...) runs on
    numba (``numba=True``) or on its fallback; the previous setting is restored after."""
    if numba:
        require_oracle("numba")
        if os.environ.get(switch.env_var) == "0":
            not_applicable(f"{switch.env_var}=0 switches numba off: there is no second backend to compare with")
    previous = switch.set(numba)
    try:
        assert switch.enabled() is numba, f"{switch.env_var}: asked for numba={numba}, got {switch.enabled()}"
        yield
    finally:
        switch.set(previous)
