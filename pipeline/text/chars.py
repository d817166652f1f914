"""Code point arrays of texts and per-code-point class tables (numpy lookups instead of per-character loops)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import numpy as np

N_CODEPOINTS = 0x110000


def codepoints(text: str) -> np.ndarray:
    """The code points of ``text`` (uint32; a lone surrogate is one code point, as in ``len(text)``)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def table_of(chars: Iterable[str]) -> np.ndarray:
    """A boolean table over all code points, true at ``chars``."""
    table = np.zeros(N_CODEPOINTS, dtype=bool)
    table[[ord(c) for c in chars]] = True
    return table


@cache
def alpha_table() -> np.ndarray:
    """True at every code point whose character is ``str.isalpha()`` (built once per process)."""
    return np.fromiter((chr(c).isalpha() for c in range(N_CODEPOINTS)), dtype=bool, count=N_CODEPOINTS)


@cache
def space_table() -> np.ndarray:
    """True at every code point whose character is ``str.isspace()`` (built once per process)."""
    return np.fromiter((chr(c).isspace() for c in range(N_CODEPOINTS)), dtype=bool, count=N_CODEPOINTS)
