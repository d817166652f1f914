"""LSH S-curve: planted near-duplicate pairs of known exact Jaccard s become candidates (share a
band key) with probability 1 - (1 - s^R)^B (docs/dedup.md, Banding), and recall/precision follow from it.

Tolerances: candidate counts are sums of independent Bernoulli(p_i), so each observed count is
checked against its expectation within 4 standard deviations (+1 for discreteness).
"""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pytest

from pipeline.dedup import band_keys, minhash_signatures, optimal_bands


def planted_pairs(n_pairs: int, seed: int, words: int = 100) -> tuple[list[str], np.ndarray]:
    """Documents 2i and 2i+1 are a pair: the second replaces 0..12 random words of the first, which
    puts exact Jaccard between ~0.25 and 1, where the S-curve is steep. Words are random 8-letter
    strings, so pairs of different i share no 5-gram."""
    rng = random.Random(seed)
    word = lambda: "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))  # noqa: E731
    docs, truth = [], []
    for _ in range(n_pairs):
        base = [word() for _ in range(words)]
        variant = list(base)
        for pos in rng.sample(range(words), k=rng.randint(0, 12)):
            variant[pos] = word()
        docs += [" ".join(base), " ".join(variant)]
        a = {tuple(base[j : j + 5]) for j in range(words - 4)}
        b = {tuple(variant[j : j + 5]) for j in range(words - 4)}
        truth.append(len(a & b) / len(a | b))
    return docs, np.array(truth)


def candidate_pairs(keys: np.ndarray) -> set[tuple[int, int]]:
    """All document pairs sharing a (band, key) bucket."""
    out: set[tuple[int, int]] = set()
    for band in range(keys.shape[1]):
        buckets: dict[int, list[int]] = defaultdict(list)
        for doc, key in enumerate(keys[:, band].tolist()):
            buckets[key].append(doc)
        for members in buckets.values():
            out.update((a, b) for i, a in enumerate(members) for b in members[i + 1 :])
    return out


def within(observed: float, p: np.ndarray) -> bool:
    """Observed count of successes vs independent Bernoulli(p): within 4 sigma (+1)."""
    return abs(observed - p.sum()) <= 4 * np.sqrt((p * (1 - p)).sum()) + 1


@pytest.mark.parametrize(
    "threshold,num_perm,scheme,hash_name",
    [(0.7, 256, "affine32", "sha1"), (0.5, 128, "legacy", "sha1"), (0.8, 256, "affine32", "xxhash")],
)
def test_candidate_rate_follows_s_curve(threshold, num_perm, scheme, hash_name):
    b, r = optimal_bands(threshold, num_perm)
    docs, truth = planted_pairs(2500, seed=int(threshold * 100) + num_perm)
    sig = minhash_signatures(docs, num_perm=num_perm, scheme=scheme, hash=hash_name)
    cands = candidate_pairs(band_keys(sig, b, r))
    planted = np.array([(2 * i, 2 * i + 1) in cands for i in range(len(truth))])
    p = 1 - (1 - truth**r) ** b

    # Unrelated documents share no shingle: any such candidate would be a band-key collision.
    assert not {pair for pair in cands if pair[1] != pair[0] + 1 or pair[0] % 2}
    assert truth.min() < threshold - 0.2 and truth.max() == 1.0  # the planted range spans the curve

    # The S-curve: all pairs together (the most sensitive check), then bin by bin of exact Jaccard.
    assert within(planted.sum(), p), (planted.sum(), p.sum())
    edges = np.linspace(0, 1, 11)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        sel = (truth >= lo) & (truth < hi) if hi < 1 else (truth >= lo)
        if sel.sum():
            assert within(planted[sel].sum(), p[sel]), (lo, hi, planted[sel].sum(), p[sel].sum())

    # Recall of pairs above T and precision of the candidates, as the S-curve predicts.
    above = truth >= threshold
    assert within(planted[above].sum(), p[above])
    assert within(planted[~above].sum(), p[~above])
    recall, recall_pred = planted[above].mean(), p[above].mean()
    precision, precision_pred = above[planted].mean(), p[above].sum() / p.sum()
    n_cand = planted.sum()
    assert abs(recall - recall_pred) <= 4 * np.sqrt(recall_pred * (1 - recall_pred) / above.sum()) + 0.01
    assert abs(precision - precision_pred) <= 4 * np.sqrt(precision_pred * (1 - precision_pred) / n_cand) + 0.01
