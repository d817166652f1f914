"""The SHA-1 features path as it was before issue #32, kept as the benchmarks' baseline (not used by the pipeline).

Documents with more windows than ``max_shingles`` left the compiled path: each was shingled again in Python
(one ``bytes`` object and one dictionary entry per shingle) and hashed by ``hashlib``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.dedup import hashes as H
from pipeline.dedup.sha1_numba import sha1_windows
from pipeline.dedup.shingles import shingles
from pipeline.dedup.shingles_numba import utf8_units, word_table


def replace_docs(
    h: np.ndarray, offsets: np.ndarray, docs: np.ndarray, new: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """``(h, offsets)`` with the segments of ``docs`` replaced by ``new`` (same order)."""
    parts = [h[offsets[d] : offsets[d + 1]] for d in range(len(offsets) - 1)]
    for d, seg in zip(docs.tolist(), new, strict=True):
        parts[d] = seg
    return (np.concatenate(parts) if parts else h[:0]), H._offsets([len(p) for p in parts])


def sha1_hashes_counts(
    texts: Sequence[str], ngram: int, shingle: str, max_shingles: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The previous compiled ``hashes._sha1_hashes_counts`` (word or char shingles)."""
    cps, doc_off = H._codepoints(texts)
    buf, lo, hi, unit_off = utf8_units(cps, doc_off, word_table(), shingle == "char")
    counts = np.diff(unit_off) if shingle == "word" else H._char_token_counts(buf[lo] == 0x20, unit_off)
    hashes, win_off = sha1_windows(buf, lo, hi, unit_off, ngram)
    if max_shingles is not None:
        over = np.flatnonzero(np.diff(win_off) > max_shingles)
        if len(over):
            new = [H.sha1_hash32_many(shingles(texts[d], ngram, shingle, max_shingles)) for d in over.tolist()]
            hashes, win_off = replace_docs(hashes, win_off, over, new)
    return hashes, win_off, counts
