"""Unit tests of the pure near-dedup kernels (no Spark): shingles, hashes, signatures, bands, Jaccard."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest

from pipeline.dedup import (
    band_keys,
    count_tokens,
    estimate_jaccard,
    jaccard,
    minhash_signatures,
    optimal_bands,
    shingle_hashes,
    shingle_set,
    shingles,
    signatures_from_hashes,
    text_jaccard,
    tokens,
)
from tests.oracles import require_oracle


def test_import_does_not_pull_pyspark():
    code = "import sys, pipeline.dedup; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- shingles -----------------------------------------------------------------------------------


def test_tokens_lowercase_and_split_on_non_word():
    assert tokens("Hello, World! foo_bar 42x") == ["hello", "world", "foo_bar", "42x"]
    assert tokens("Ünïcödé—ТЕСТ 日本語") == ["ünïcödé", "тест", "日本語"]
    assert tokens("a😀b  ... c") == ["a", "b", "c"]
    assert tokens("") == [] and tokens(" \n!?") == []
    assert count_tokens("one, two;three") == 3 and count_tokens("...") == 0


def test_word_shingles_distinct_in_document_order():
    assert shingles("a b c d a b c", ngram=3) == [b"a b c", b"b c d", b"c d a", b"d a b"]
    assert shingles("A  b,C", ngram=2) == [b"a b", b"b c"]
    assert shingles("Ça va très bien", ngram=3) == ["ça va très".encode(), "va très bien".encode()]


def test_short_and_empty_documents():
    assert shingles("x y", ngram=5) == [b"x y"]
    assert shingles("x y z w v", ngram=5) == [b"x y z w v"]
    assert shingles("", ngram=5) == [] and shingles("?!", ngram=5) == []


def test_char_shingles():
    assert shingles("Ab  c!", ngram=2, shingle="char") == [b"ab", b"b ", b" c"]
    assert shingles("日本", ngram=3, shingle="char") == ["日本".encode()]
    assert shingles("é日x", ngram=2, shingle="char") == ["é日".encode(), "日x".encode()]


def test_max_shingles_keeps_first_distinct():
    text = "a b a b c d e f"
    assert shingles(text, ngram=2, max_shingles=3) == [b"a b", b"b a", b"b c"]
    assert shingle_set(text, ngram=2, max_shingles=100) == shingle_set(text, ngram=2)


@pytest.mark.parametrize("kw", [{"ngram": 0}, {"shingle": "byte"}, {"max_shingles": 0}])
def test_bad_shingle_parameters(kw):
    with pytest.raises(ValueError):
        shingles("a b c", **kw)


def test_jaccard():
    assert jaccard({1, 2, 3}, {2, 3, 4}) == pytest.approx(0.5)
    assert jaccard(set(), set()) == 1.0 and jaccard({1}, set()) == 0.0
    assert text_jaccard("a b c d e", "a b c d x", ngram=2) == pytest.approx(3 / 5)
    assert estimate_jaccard(np.array([1, 2, 3, 4]), np.array([1, 0, 3, 0])) == 0.5


# --- signatures -----------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme,dtype", [("affine32", np.uint32), ("legacy", np.uint64)])
@pytest.mark.parametrize("hash_name", ["sha1", "xxhash"])
def test_signature_shape_dtype_and_empty(scheme, dtype, hash_name):
    sig = minhash_signatures(["", "a b c d e f g", "!!"], num_perm=32, scheme=scheme, hash=hash_name)
    assert sig.shape == (3, 32) and sig.dtype == dtype
    assert (sig[[0, 2]] == 0xFFFFFFFF).all()
    assert (sig[1] < 0xFFFFFFFF).all()


def test_bad_scheme_and_hash():
    with pytest.raises(ValueError):
        minhash_signatures(["a"], scheme="affine64")
    with pytest.raises(ValueError):
        minhash_signatures(["a"], hash="md5")


@pytest.mark.parametrize("scheme", ["affine32", "legacy"])
def test_chunking_does_not_change_signatures(scheme):
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 400, 60)
    lengths[[5, 6, 7]] = 0
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    hashes = rng.integers(0, 2**32, offsets[-1], dtype=np.uint32)
    ref = np.array(
        [
            signatures_from_hashes(hashes[a:b], [0, b - a], 64, 5, scheme)[0]
            for a, b in zip(offsets[:-1], offsets[1:], strict=True)
        ]
    )
    for chunk in (64, 1000, 1 << 12, 1 << 20):
        got = signatures_from_hashes(hashes, offsets, 64, 5, scheme, chunk_elements=chunk)
        assert np.array_equal(got, ref), chunk


def _docs_with_known_jaccard(n_pairs: int, seed: int) -> tuple[list[str], list[str], np.ndarray]:
    """Pairs (base, variant) of random-word documents; the variant replaces some words."""
    rng = random.Random(seed)
    word = lambda: "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(7))  # noqa: E731
    left, right, truth = [], [], []
    for i in range(n_pairs):
        base = [word() for _ in range(150)]
        variant = list(base)
        for pos in rng.sample(range(150), k=(i * 7) % 40):
            variant[pos] = word()
        a, b = " ".join(base), " ".join(variant)
        left.append(a)
        right.append(b)
        sa, sb = {tuple(base[j : j + 5]) for j in range(146)}, {tuple(variant[j : j + 5]) for j in range(146)}
        truth.append(len(sa & sb) / len(sa | sb))
    return left, right, np.array(truth)


@pytest.mark.parametrize("hash_name", ["xxhash", "sha1"])
def test_jaccard_estimates_follow_minhash_theory(hash_name):
    """Estimate error z = (est - J) / sqrt(J(1-J)/P) over many pairs: mean 0 and variance 1.

    With 300 pairs (those with 0.05 < J < 0.95) the mean of z is within +-4/sqrt(n) and the
    variance within [0.7, 1.4] (a chi-square with ~300 d.o.f. stays inside that with overwhelming
    probability); a biased or collision-prone hash fails one of them.
    """
    left, right, truth = _docs_with_known_jaccard(400, seed=11)
    p = 256
    sa = minhash_signatures(left, num_perm=p, hash=hash_name)
    sb = minhash_signatures(right, num_perm=p, hash=hash_name)
    est = estimate_jaccard(sa, sb)
    assert np.array_equal(est[truth == 1.0], np.ones((truth == 1.0).sum()))
    keep = (truth > 0.05) & (truth < 0.95)
    z = (est[keep] - truth[keep]) / np.sqrt(truth[keep] * (1 - truth[keep]) / p)
    assert keep.sum() >= 250
    assert abs(z.mean()) < 4 / np.sqrt(keep.sum()), z.mean()
    assert 0.7 < z.var() < 1.4, z.var()


def test_fast_hash_is_batch_independent_and_deterministic():
    docs = ["The quick brown fox jumps over the lazy dog again", "a b", "", "Ünïcödé text 日本語 ok fine"]
    together = minhash_signatures(docs, num_perm=64, hash="xxhash")
    alone = np.vstack([minhash_signatures([d], num_perm=64, hash="xxhash") for d in docs])
    assert np.array_equal(together, alone)
    assert np.array_equal(together, minhash_signatures(list(docs), num_perm=64, hash="xxhash"))
    # Different word orders are different shingles.
    h1, _ = shingle_hashes(["a b c d e"], hash="xxhash")
    h2, _ = shingle_hashes(["e d c b a"], hash="xxhash")
    assert h1[0] != h2[0]


def test_fast_hash_max_shingles():
    text = " ".join(f"w{i % 300}" for i in range(2000))  # 300 distinct 5-grams, repeated
    h, off = shingle_hashes([text, "x"], hash="xxhash", max_shingles=50)
    assert list(off) == [0, 50, 51] and len(set(h[:50].tolist())) == 50
    h_all, _ = shingle_hashes([text], hash="xxhash")
    assert np.array_equal(h[:50], h_all[:50])  # the first 50 shingles are all distinct here
    full = minhash_signatures([text], num_perm=64, hash="xxhash")
    assert np.array_equal(minhash_signatures([text], num_perm=64, hash="xxhash", max_shingles=300), full)


# --- bands ----------------------------------------------------------------------------------------


def test_optimal_bands_spec_default():
    assert optimal_bands(threshold=0.7, num_perm=256) == (25, 10)


def test_optimal_bands_equal_datasketch():
    lsh = require_oracle("datasketch.lsh")
    cases = [(0.7, 256), (0.5, 128), (0.8, 64), (0.3, 32), (0.9, 100), (0.85, 128), (0.6, 250)]
    for t, p in cases:
        assert optimal_bands(t, p) == lsh._optimal_param(t, p, 0.5, 0.5), (t, p)
    for t, p, w in [(0.7, 128, (0.2, 0.8)), (0.5, 64, (0.9, 0.1))]:
        assert optimal_bands(t, p, *w) == lsh._optimal_param(t, p, *w), (t, p, w)


def test_band_keys_shape_and_sensitivity():
    rng = np.random.default_rng(0)
    sig = rng.integers(0, 2**32, (4, 23), dtype=np.uint32)
    keys = band_keys(sig, 4, 5)  # 3 remainder columns
    assert keys.shape == (4, 4) and keys.dtype == np.uint64
    other = sig.copy()
    other[:, 20:] += 1  # remainder only
    assert np.array_equal(band_keys(other, 4, 5), keys)
    other = sig.copy()
    other[2, 7] ^= 1  # band 1 of row 2 only
    changed = band_keys(other, 4, 5) != keys
    assert changed.sum() == 1 and changed[2, 1]


def test_band_keys_equal_values_in_different_bands_differ():
    sig = np.tile(np.arange(5, dtype=np.uint32), (1, 4))
    keys = band_keys(sig, 4, 5)
    assert len(set(keys[0].tolist())) == 4


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_band_keys_no_collisions_on_random_bands(dtype):
    rng = np.random.default_rng(1)
    sig = rng.integers(0, 2**32, (20000, 20), dtype=np.uint64).astype(dtype)
    sig[::2, :4] = 7  # many rows share part of a band: keys must still differ
    keys = band_keys(sig, 5, 4)
    assert len(np.unique(keys[:, 1:])) == keys[:, 1:].size
    assert len(np.unique(keys[1::2, 0])) == 10000 and len(np.unique(keys[::2, 0])) == 1


def test_band_keys_bad_arguments():
    sig = np.zeros((2, 10), dtype=np.uint32)
    with pytest.raises(ValueError):
        band_keys(sig, 3, 4)
    with pytest.raises(ValueError):
        band_keys(sig.astype(np.int64), 2, 5)


def test_numba_is_lazy_and_can_be_switched_off():
    """Importing the package does not import numba; PIPELINE_DEDUP_NUMBA=0 gives the numpy path,
    whose signatures equal the numba path's (checked here across processes)."""
    code = (
        "import sys, numpy as np, pipeline.dedup as d\n"
        "before = 'numba' in sys.modules\n"
        "docs = ['The quick brown fox jumps over the lazy dog', 'a b', '', 'Ünïcödé 日本語 text x y z']\n"
        "s = np.concatenate([d.minhash_signatures(docs, num_perm=16, hash=h).ravel() for h in ('sha1', 'xxhash')])\n"
        "print(before, 'numba' in sys.modules, ','.join(map(str, s.tolist())))\n"
    )
    outs = {}
    for flag in ("0", "1"):
        env = {**os.environ, "PIPELINE_DEDUP_NUMBA": flag}
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        outs[flag] = run.stdout.split()
    assert outs["0"][:2] == ["False", "False"]
    assert outs["1"][:2] == ["False", "True"]
    assert outs["0"][2] == outs["1"][2]
