"""The integer mixers and constants of the dedup hashes, written once for numpy and numba.

:func:`fmix32` and :func:`fmix64` are MurmurHash3's finalizers (avalanching bijections). Their bodies
use only operators and explicit ``uint32``/``uint64`` truncation, so the same function runs
element-wise on numpy arrays and, wrapped in ``numba.njit`` by the compiled kernels, on scalars
(numba widens 32-bit arithmetic to 64 bits, hence the truncation). No numba import here.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np

U32 = np.uint32
U64 = np.uint64

FMIX32_SHIFT_A = U32(16)
FMIX32_MUL_1 = U32(0x85EBCA6B)
FMIX32_SHIFT_B = U32(13)
FMIX32_MUL_2 = U32(0xC2B2AE35)
FMIX64_SHIFT = U64(33)
FMIX64_MUL_1 = U64(0xFF51AFD7ED558CCD)
FMIX64_MUL_2 = U64(0xC4CEB9FE1A85EC53)

UNIT_MUL = U64(0xA0761D6478BD642F)  # odd: Horner multiplier of a unit's code points (fast hash)
UNIT_LEN_SALT = U64(0xE7037ED1A0B428DB)  # a unit's length, mixed into its hash
WINDOW_MUL = U64(0x9E3779B97F4A7C15)  # odd (golden ratio): polynomial over a shingle's unit hashes
WINDOW_LEN_SALT = U64(0xD6E8FEB86659FD93)  # a shingle's width, mixed into its seed
BAND_SALT = U64(0x2545F4914F6CDD1D)  # LSH band keys: band number and lane salts


@overload
def fmix32(h: np.ndarray) -> np.ndarray: ...
@overload
def fmix32(h: np.uint32) -> np.uint32: ...
def fmix32(h: Any) -> Any:  # a uint32 array (numpy) or scalar (numba)
    """MurmurHash3's 32-bit finalizer with uint32 wrap-around."""
    h = U32(h ^ (h >> FMIX32_SHIFT_A))
    h = U32(h * FMIX32_MUL_1)
    h = U32(h ^ (h >> FMIX32_SHIFT_B))
    h = U32(h * FMIX32_MUL_2)
    return U32(h ^ (h >> FMIX32_SHIFT_A))


@overload
def fmix64(x: np.ndarray) -> np.ndarray: ...
@overload
def fmix64(x: np.uint64) -> np.uint64: ...
def fmix64(x: Any) -> Any:  # a uint64 array (numpy) or scalar (numba)
    """MurmurHash3's 64-bit finalizer with uint64 wrap-around."""
    x = x ^ (x >> FMIX64_SHIFT)
    x = x * FMIX64_MUL_1
    x = x ^ (x >> FMIX64_SHIFT)
    x = x * FMIX64_MUL_2
    return x ^ (x >> FMIX64_SHIFT)
