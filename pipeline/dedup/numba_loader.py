"""Where the dedup family's numba kernels are imported: here, once, when a call first runs compiled.

A call site asks :func:`compiled_kernels` with its kernel name and input size; the family switch
(:data:`pipeline.numba_backend.DEDUP`) decides, and the answer is either the kernel modules or ``None``
(the pure Python/numpy path, which gives identical results).
"""

from __future__ import annotations

from types import ModuleType
from typing import NamedTuple

from pipeline.numba_backend import DEDUP


class DedupKernels(NamedTuple):
    """The compiled twins of the dedup kernels, one module each."""

    shingles: ModuleType  # shingles_numba: a batch's units (UTF-8 ranges, or unit hashes), its word table
    sha1: ModuleType  # sha1_numba: SHA-1 shingle hashes
    hashes: ModuleType  # hashes_numba: fast-hash K-gram windows
    minhash: ModuleType  # minhash_numba: signature matrices
    pair_jaccard: ModuleType  # pair_jaccard_numba: distinct shingles and exact Jaccard of pairs


def compiled_kernels(kernel: str, size: int) -> DedupKernels | None:
    """The compiled kernels when this call of ``kernel`` on ``size`` bytes runs compiled
    (:meth:`pipeline.numba_backend.NumbaSwitch.use`), else ``None``."""
    if not DEDUP.use(kernel, size):
        return None
    # lazy: importing numba and loading (or compiling) the kernels costs seconds, paid only by calls that use them
    from pipeline.dedup import hashes_numba, minhash_numba, pair_jaccard_numba, sha1_numba, shingles_numba

    return DedupKernels(shingles_numba, sha1_numba, hashes_numba, minhash_numba, pair_jaccard_numba)
