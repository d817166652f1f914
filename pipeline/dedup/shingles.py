"""Shingling for near-dedup (docs/dedup.md, Shingles): lower-case, split on Unicode ``\\W``, word or char K-grams.

A document is reduced to a sequence of *units*: its word tokens (``shingle="word"``) or the
characters of its tokens joined by single spaces (``shingle="char"``). A shingle is K consecutive
units joined by ``" "`` (word) or ``""`` (char), UTF-8 encoded. A document with fewer than K units
has one shingle made of all of them; a document with no units has no shingles.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import accumulate, islice

import numpy as np

from pipeline.text.words import count_tokens, tokens

SHINGLE_KINDS = ("word", "char")
__all__ = ["SHINGLE_KINDS", "count_tokens", "shingles", "shingle_set", "tokens", "unit_shingles", "units"]


def check_shingle_params(ngram: int, shingle: str, max_shingles: int | None) -> None:
    """Raise ``ValueError`` on an invalid shingle configuration."""
    if not isinstance(ngram, int) or ngram < 1:
        raise ValueError(f"ngram must be a positive integer, got {ngram!r}")
    if shingle not in SHINGLE_KINDS:
        raise ValueError(f"shingle must be one of {SHINGLE_KINDS}, got {shingle!r}")
    if max_shingles is not None and (not isinstance(max_shingles, int) or max_shingles < 1):
        raise ValueError(f"max_shingles must be None or a positive integer, got {max_shingles!r}")


def units(text: str, shingle: str = "word") -> list[str]:
    """The units shingles are made of: word tokens, or characters of the space-joined tokens."""
    toks = tokens(text)
    if shingle == "word":
        return toks
    if shingle == "char":
        return list(" ".join(toks))
    raise ValueError(f"shingle must be one of {SHINGLE_KINDS}, got {shingle!r}")


def _first_distinct(items: Iterable[bytes], limit: int | None) -> list[bytes]:
    """Distinct items in first-occurrence order, at most ``limit`` of them."""
    if limit is None:
        return list(dict.fromkeys(items))
    seen: dict[bytes, None] = {}
    for item in items:
        if item not in seen:
            seen[item] = None
            if len(seen) >= limit:
                break
    return list(islice(seen, limit))


def _unit_starts(us: list[str], data: bytes, shingle: str) -> list[int]:
    """Byte offset in ``data`` (the encoded, joined units) where each unit starts, plus a sentinel
    one separator past the end, so that the K-gram at unit i is ``data[pos[i] : pos[i+K] - len(sep)]``."""
    if len(us) > 64 or len(data) != sum(map(len, us)) + (len(us) - 1) * (shingle == "word"):
        arr = np.frombuffer(data, dtype=np.uint8)
        if shingle == "word":  # units are \w+ runs, so byte 0x20 only occurs as the separator
            starts = np.flatnonzero(arr == 0x20) + 1
            return [0, *starts.tolist(), len(data) + 1]
        starts = np.flatnonzero((arr & 0xC0) != 0x80)  # first byte of each UTF-8 character
        return [*starts.tolist(), len(data)]
    step = 1 if shingle == "word" else 0
    return list(accumulate([len(u) + step for u in us], initial=0))


def shingles(text: str, ngram: int = 5, shingle: str = "word", max_shingles: int | None = None) -> list[bytes]:
    """Distinct UTF-8 shingles of ``text`` in document order, capped at ``max_shingles``.

    The cap keeps the first ``max_shingles`` distinct shingles, so it is deterministic.
    """
    check_shingle_params(ngram, shingle, max_shingles)
    return unit_shingles(units(text, shingle), ngram, shingle, max_shingles)


def unit_shingles(us: list[str], ngram: int, shingle: str, max_shingles: int | None) -> list[bytes]:
    """:func:`shingles` of a document already split into its units (``units(text, shingle)``)."""
    if not us:
        return []
    sep = " " if shingle == "word" else ""
    if len(us) <= ngram:
        return [sep.join(us).encode("utf-8")]
    data = sep.join(us).encode("utf-8")
    pos = _unit_starts(us, data, shingle)
    step = len(sep)
    grams = [data[lo : hi - step] for lo, hi in zip(pos, pos[ngram:], strict=False)]
    return _first_distinct(grams, max_shingles)


def shingle_set(text: str, ngram: int = 5, shingle: str = "word", max_shingles: int | None = None) -> frozenset[bytes]:
    """The shingle set of ``text`` (what exact-Jaccard verification compares)."""
    return frozenset(shingles(text, ngram, shingle, max_shingles))
