"""MinHash LSH near-dedup kernels (docs/dedup.md): pure numpy, importable without Spark.

Public API (docs/api.md, Dedup)::

    sigs = minhash_signatures(texts, num_perm=256, seed=1, ngram=5, scheme="affine32", hash="sha1")
    b, r = optimal_bands(threshold=0.7, num_perm=256)   # (25, 10)
    keys = band_keys(sigs, b, r)                        # uint64 (n, b)
"""

from .bands import band_keys, candidate_probability, optimal_bands
from .hashes import HASHES, shingle_hashes
from .jaccard import estimate_jaccard, jaccard, text_jaccard
from .minhash import SCHEMES, minhash_signatures, permutations, signatures_from_hashes
from .shingles import count_tokens, shingle_set, shingles, tokens

__all__ = [
    "HASHES",
    "SCHEMES",
    "band_keys",
    "candidate_probability",
    "count_tokens",
    "estimate_jaccard",
    "jaccard",
    "minhash_signatures",
    "optimal_bands",
    "permutations",
    "shingle_hashes",
    "shingle_set",
    "shingles",
    "signatures_from_hashes",
    "text_jaccard",
    "tokens",
]
