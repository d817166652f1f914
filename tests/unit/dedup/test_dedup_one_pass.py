"""The features step tokenises each batch once (issue #16): token counts and shingle hashes from the same pass
equal what the separate functions give, on both backends, and the band keys equal the two-pass computation."""

from __future__ import annotations

import random
import re

import numpy as np
import pyarrow as pa
import pytest

from pipeline.dedup.bands import band_keys
from pipeline.dedup.batches import LshParams, doc_features
from pipeline.dedup.hashes import shingle_hashes, shingle_hashes_and_counts
from pipeline.dedup.minhash import signatures_from_hashes
from pipeline.numba_backend import DEDUP
from tests.backends import numba_backend

VOCAB = ["alpha", "beta", "gamma", "Delta", "épée", "naïve", "日本語", "σίσυφος", "x", "42", "a_b", "ΣΑΣ", "İstanbul"]


def texts_for(seed: int, n: int) -> list[str]:
    """Short (below min_tokens) and long texts, repeats, Unicode, empty and punctuation-only ones."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(VOCAB) for _ in range(rng.choice([0, 1, 3, 4, 5, 6, 12, 40, 200]))]
        out.append(rng.choice([" ", ", ", "\n", "--", " ... "]).join(words * rng.choice([1, 1, 3])))
    return out + ["", "   ...   ", "one", "one two three four", "e\u0301 x y z w v"]


def regex_counts(texts: list[str]) -> list[int]:
    return [len([t for t in re.split(r"\W+", x.lower()) if t]) for x in texts]


@pytest.fixture(params=["numba", "python"])
def backend(request):
    with numba_backend(DEDUP, request.param == "numba"):
        yield request.param


@pytest.mark.parametrize("hash_name", ["sha1", "xxhash"])
@pytest.mark.parametrize("kind,k,cap", [("word", 5, None), ("word", 2, 6), ("char", 4, None), ("char", 3, 10)])
def test_one_pass_equals_separate_functions(backend, hash_name, kind, k, cap):
    texts = texts_for(k * 7 + (cap or 0), 150)
    hashes, offsets, counts = shingle_hashes_and_counts(texts, k, kind, cap, hash_name)
    ref_h, ref_off = shingle_hashes(texts, k, kind, cap, hash_name)
    assert np.array_equal(hashes, ref_h) and np.array_equal(offsets, ref_off)
    assert counts.dtype == np.int64 and counts.tolist() == regex_counts(texts)
    empty = shingle_hashes_and_counts([], k, kind, cap, hash_name)
    assert [len(x) for x in empty] == [0, 1, 0]


def two_pass_keys(texts: list[str], p: LshParams, min_tokens: int) -> list[list[int] | None]:
    """The features step as it was: counts first, then hashes of the eligible texts alone."""
    counts = regex_counts(texts)
    eligible = [i for i, c in enumerate(counts) if c >= max(min_tokens, 1)]
    keys: list[list[int] | None] = [None] * len(texts)
    if eligible:
        h, off = shingle_hashes([texts[i] for i in eligible], p.ngram, p.shingle, p.max_shingles, p.hash)
        band = band_keys(signatures_from_hashes(h, off, p.num_perm, p.seed, p.scheme), p.bands, p.rows)
        for row, i in enumerate(eligible):
            keys[i] = band[row].view(np.int64).tolist()
    return keys


CASES = [("word", None, 5), ("word", 8, 1), ("char", None, 4), ("word", None, 1000)]


@pytest.mark.parametrize("hash_name", ["sha1", "xxhash"])
@pytest.mark.parametrize("kind,cap,min_tokens", CASES)
def test_doc_features_equal_two_pass(backend, hash_name, kind, cap, min_tokens):
    texts = texts_for(11, 120)
    p = LshParams(64, 1, 5, "affine32", hash_name, kind, cap, 8, 8)
    batches = [
        pa.RecordBatch.from_arrays(
            [pa.array(range(lo, min(lo + 50, len(texts))), pa.int64()), pa.array(texts[lo : lo + 50])],
            names=["doc_id", "text"],
        )
        for lo in range(0, len(texts), 50)
    ]
    out = pa.Table.from_batches(list(doc_features(iter(batches), p, min_tokens)))
    assert out.column("ntokens").to_pylist() == regex_counts(texts)
    expected = [k for lo in range(0, len(texts), 50) for k in two_pass_keys(texts[lo : lo + 50], p, min_tokens)]
    assert out.column("keys").to_pylist() == expected
    assert any(k is None for k in expected) and (min_tokens == 1000 or any(k is not None for k in expected))


def test_codepoints_are_those_of_the_lowered_texts():
    """The code-point array the compiled tokeniser reads is ``ord`` of every character of ``str.lower``, whatever
    the widest character of a text (ASCII, Latin-1, the BMP, astral planes, a lone surrogate) and when lowering
    changes a text's length (``İ`` lowers to two code points)."""
    from pipeline.dedup.hashes import _codepoints

    texts = ["Plain ASCII Text", "", "Épée naïve", "ΣΑΣ 日本語", "emoji \U0001f600 Up", "lone \ud800 surrogate"]
    texts += ["İstanbul", *texts_for(7, 40)]
    for batch in (texts, texts[:1], [], ["\U0001f600"], ["A", "ß", "\ud83d\ude00"]):
        cps, offsets = _codepoints(batch)
        expected = [[ord(c) for c in t.lower()] for t in batch]
        assert cps.dtype == np.uint32
        assert offsets.tolist() == np.cumsum([0] + [len(e) for e in expected]).tolist()
        assert cps.tolist() == [c for e in expected for c in e]
