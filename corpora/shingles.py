"""Word k-gram shingles written from docs/dedup.md, Shingles, independently of ``pipeline.dedup``: the constant
corpus's near-copy check and the benches' brute-force precision check."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")


def shingle_set(text: str, k: int) -> set[str]:
    """Word K-gram shingles of ``text`` (docs/dedup.md, Shingles)."""
    toks = _WORD.findall(text.lower())
    if len(toks) < k:
        return {" ".join(toks)} if toks else set()
    return {" ".join(toks[i : i + k]) for i in range(len(toks) - k + 1)}
