"""Word-token counts of a batch of texts (what ``min_tokens`` is compared with), no Spark import.

With numba the batch goes through the compiled tokeniser of :mod:`.shingles_numba`, whose tokens are
exactly :func:`pipeline.dedup.shingles.tokens`; without it, :func:`pipeline.dedup.shingles.count_tokens`
runs per text (a Python regex pass, the largest per-document cost of the features step before).
The features step itself takes the counts from the pass that hashes the shingles
(:func:`pipeline.dedup.hashes.shingle_hashes_and_counts`), so it tokenises each batch once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.dedup.numba_loader import compiled_kernels

from .hashes import _codepoints, text_size
from .shingles import count_tokens


def token_counts(texts: Sequence[str]) -> np.ndarray:
    """int64 number of word tokens of every text."""
    nb = compiled_kernels("shingles", text_size(texts), "units") if len(texts) else None
    if nb is None:
        return np.fromiter((count_tokens(t) for t in texts), dtype=np.int64, count=len(texts))
    unit_off: np.ndarray
    _, _, _, unit_off = nb.shingles.utf8_units(*_codepoints(texts), nb.shingles.word_table(), False)
    return np.diff(unit_off).astype(np.int64)
