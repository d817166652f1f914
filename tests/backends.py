"""Run a kernel family on a chosen backend (numba or the pure numpy/Python fallback), checked, for comparisons.

``set_numba(True)`` quietly stays on the fallback when numba does not import or the family's environment
variable is ``0``; a comparison made that way would compare the fallback with itself. :func:`numba_backend`
forces the backend through the family's own switch and asserts it took.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

import pytest

from tests.oracles import require_oracle


class KernelFamily(Protocol):
    """A module exposing a family's numba switch (pipeline.dedup._kernels, pipeline.blend._kernel, ...)."""

    numba_enabled: Callable[[], bool]
    set_numba: Callable[[bool | None], bool | None]


@contextmanager
def numba_backend(family: KernelFamily, numba: bool) -> Iterator[None]:
    """Within the block, ``family`` runs on numba (``numba=True``) or on its fallback; restored after."""
    env_var = family.set_numba.__self__.env_var  # type: ignore[attr-defined]  # the family's NumbaSwitch
    if numba:
        require_oracle("numba")
        if os.environ.get(env_var) == "0":
            pytest.skip(f"{env_var}=0 switches numba off: there is no second backend to compare with")
    previous = family.set_numba(numba)
    try:
        assert family.numba_enabled() is numba, f"{env_var}: asked for numba={numba}, got {family.numba_enabled()}"
        yield
    finally:
        family.set_numba(previous)
