"""Word n-grams of a text and their 64-bit hashes (pure: numpy and xxhash, no Spark).

Words are the dedup shingler's tokens (docs/dedup.md, Shingles): lower-cased, split on Unicode ``\\W``, empties
dropped. An n-gram is ``n`` consecutive words joined by one space; its hash is xxh3-64 of the UTF-8
bytes. A text with fewer than ``n`` words has no n-gram (it cannot be checked; callers count it).
"""

from __future__ import annotations

import numpy as np
import xxhash

from pipeline.text.words import tokens


def word_ngrams(text: str, n: int) -> list[str]:
    """Every run of ``n`` consecutive lower-cased words of ``text``, in order (repeats kept)."""
    if n < 1:
        raise ValueError(f"ngram must be >= 1, got {n}")
    words = tokens(text)
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def hash_ngram(ngram: str) -> int:
    """The unsigned 64-bit hash of one n-gram."""
    return xxhash.xxh3_64_intdigest(ngram.encode("utf-8", "surrogatepass"))


def ngram_hashes(text: str, n: int) -> tuple[np.ndarray, list[str]]:
    """Distinct n-gram hashes of ``text`` (sorted uint64) and, aligned with them, one n-gram each."""
    grams = word_ngrams(text, n)
    if not grams:
        return np.zeros(0, np.uint64), []
    hashes = np.fromiter((hash_ngram(g) for g in grams), dtype=np.uint64, count=len(grams))
    unique, first = np.unique(hashes, return_index=True)
    return unique, [grams[i] for i in first.tolist()]


class ReferenceTable:
    """Sorted (hash, reference index) pairs of every reference n-gram: the broadcast lookup table."""

    def __init__(self, hashes: np.ndarray, refs: np.ndarray, names: list[str]) -> None:
        order = np.lexsort((refs, hashes))
        self.hashes = np.ascontiguousarray(hashes[order], dtype=np.uint64)
        self.refs = np.ascontiguousarray(refs[order], dtype=np.int32)
        self.names = names

    def __len__(self) -> int:
        return len(self.hashes)

    def matches(self, doc_hashes: np.ndarray) -> dict[int, np.ndarray]:
        """Reference index -> the distinct ``doc_hashes`` (sorted uint64) found in that reference."""
        if len(doc_hashes) == 0 or len(self.hashes) == 0:
            return {}
        lo = np.searchsorted(self.hashes, doc_hashes, side="left")
        hi = np.searchsorted(self.hashes, doc_hashes, side="right")
        hit = np.flatnonzero(hi > lo)
        if len(hit) == 0:
            return {}
        counts = (hi - lo)[hit]
        within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)  # 0.. per hit
        positions = np.repeat(lo[hit], counts) + within
        found_hash = np.repeat(doc_hashes[hit], counts)
        found_ref = self.refs[positions]
        return {int(r): np.unique(found_hash[found_ref == r]) for r in np.unique(found_ref).tolist()}


def contamination(doc_hashes: np.ndarray, table: ReferenceTable, min_matches: int) -> tuple[int, int, int] | None:
    """``(reference index, shared n-grams, one shared hash)`` of the reference sharing the most n-grams
    with the document (ties: the lower index), when that is >= ``min_matches``; else None."""
    best = None
    for ref, shared in sorted(table.matches(doc_hashes).items()):
        if len(shared) >= min_matches and (best is None or len(shared) > best[1]):
            best = (ref, len(shared), int(shared[0]))
    return best
