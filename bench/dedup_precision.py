"""Exact Jaccard of removed documents against their matches, by brute force over Python sets; shingles written
from docs/dedup.md, Shingles, independently of ``pipeline.dedup`` (corpora/shingles.py)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from corpora.shingles import shingle_set


def sample(removed: Iterable[int], n: int, seed: int) -> list[int]:
    """``n`` of ``removed`` (all when fewer), by ``random.Random(seed)`` from their sorted order."""
    pool = sorted(removed)
    return sorted(random.Random(seed).sample(pool, min(n, len(pool))))


def scan(
    texts: Iterable[tuple[int, str]],
    sampled: Mapping[int, str],
    partners: Mapping[int, Iterable[int]],
    k: int,
) -> tuple[dict[int, tuple[int, float]], dict[tuple[int, int], float]]:
    """One pass over the corpus: each ``sampled`` document's best match (index, Jaccard; the smaller index on a tie,
    (-1, 0.0) for none) and the Jaccard of every (sampled, partner) pair of ``partners``."""
    sets = {i: shingle_set(text, k) for i, text in sampled.items()}
    owners: dict[str, list[int]] = {}
    for i, s in sets.items():
        for sh in s:
            owners.setdefault(sh, []).append(i)
    best = {i: (-1, 0.0) for i in sets}
    pairs = {(i, j): 0.0 for i, js in partners.items() for j in js}
    for j, text in texts:
        other = shingle_set(text, k)
        shared: dict[int, int] = {}
        for sh in other:
            for i in owners.get(sh, ()):
                shared[i] = shared.get(i, 0) + 1
        if not other:  # an empty document is identical to every other empty one
            shared = {i: 0 for i, s in sets.items() if not s}
        for i, inter in shared.items():
            if i == j:
                continue
            union = len(sets[i]) + len(other) - inter
            sim = inter / union if union else 1.0
            if sim > best[i][1] or best[i][0] < 0:
                best[i] = (j, sim)
            if (i, j) in pairs:
                pairs[(i, j)] = sim
    return best, pairs
