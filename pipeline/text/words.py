"""Word tokens (docs/dedup.md, Shingles): lower-cased, split on Unicode ``\\W``, empties dropped."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``: split on Unicode non-word characters, empties dropped."""
    return _WORD.findall(text.lower())


def count_tokens(text: str) -> int:
    """Number of word tokens of ``text`` (the quantity compared with ``min_tokens``)."""
    return len(tokens(text))
