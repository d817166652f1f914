"""Arrays for the large, randomly read parts of a fastText model (the input matrix, the dictionary's hash table)
in memory the kernel may map with 2 MB pages.

A random row of a large input matrix costs a cache miss and, with 4 KB pages, a TLB miss (in a virtual machine a
two-level page walk). Anonymous private memory aligned to 2 MB and advised ``MADV_HUGEPAGE`` is mapped with
transparent huge pages where the kernel allows it (``/sys/kernel/mm/transparent_hugepage/enabled`` set to
``always`` or ``madvise``); elsewhere it is ordinary memory, the same values. A small array is allocated as usual.
"""

from __future__ import annotations

import mmap

import numpy as np

HUGE_PAGE = 2 << 20
SMALL = 8 * HUGE_PAGE  # arrays below this size are allocated by numpy as usual


def huge_empty(shape: tuple[int, ...], dtype: type | np.dtype) -> np.ndarray:
    """An uninitialised C-ordered array of ``shape``, aligned to 2 MB and advised huge pages when it is large."""
    kind = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * kind.itemsize
    advise = getattr(mmap, "MADV_HUGEPAGE", None)
    if size < SMALL or advise is None or not hasattr(mmap, "MAP_ANONYMOUS"):
        return np.empty(shape, dtype=kind)
    # private: shared anonymous memory is shmem, which huge pages reach only with their own sysfs switch
    area = mmap.mmap(-1, size + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    whole = np.frombuffer(area, dtype=np.uint8)
    skip = -whole.ctypes.data % HUGE_PAGE
    try:
        area.madvise(advise, skip, size)
    except OSError:  # a kernel without transparent huge pages: ordinary pages
        pass
    return whole[skip : skip + size].view(kind).reshape(shape)


def huge_copy(array: np.ndarray) -> np.ndarray:
    """A C-ordered copy of ``array`` in :func:`huge_empty` memory."""
    out = huge_empty(array.shape, array.dtype)
    out[...] = array
    return out
