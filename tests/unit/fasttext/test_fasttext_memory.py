"""Huge-page memory for a model's large arrays (pipeline/fasttext/memory.py): the same values, C-ordered, a large
array on a 2 MB boundary, a small one allocated as usual."""

from __future__ import annotations

import numpy as np

from pipeline.fasttext.memory import HUGE_PAGE, SMALL, huge_copy, huge_empty


def test_a_large_copy_is_aligned_and_equal() -> None:
    rows = SMALL // (4 * 100) + 3  # past the size allocated as usual, not a whole number of pages
    source = np.random.default_rng(0).random((rows, 100), dtype=np.float32)
    copy = huge_copy(source)
    assert copy.ctypes.data % HUGE_PAGE == 0
    assert copy.flags.c_contiguous and copy.flags.writeable and copy.dtype == np.float32
    np.testing.assert_array_equal(copy, source)
    copy[-1, -1] = 7  # the last element is inside the mapping, and the source is not shared
    assert source[-1, -1] != 7


def test_a_small_array_is_allocated_as_usual() -> None:
    small = huge_empty((10, 3), np.uint64)
    assert small.shape == (10, 3) and small.dtype == np.uint64 and small.base is None
