"""Conformance: our signatures are bit-identical to datasketch 2.x MinHash (SPEC §4.2), both schemes.

The reference shingler below is written from SPEC §4.1 independently of ``pipeline.dedup.shingles``;
datasketch is fed its shingles with its default hash (``sha1_hash32``).
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

datasketch = pytest.importorskip("datasketch")

from pipeline.dedup import minhash_signatures, shingle_set  # noqa: E402


def ref_shingles(text: str, k: int = 5, char: bool = False) -> list[bytes]:
    """SPEC §4.1, literally: distinct K-grams in first-occurrence order, UTF-8 encoded."""
    toks = [t for t in re.split(r"\W", text.lower()) if t]
    units = list(" ".join(toks)) if char else toks
    if not units:
        return []
    sep = "" if char else " "
    if len(units) < k:
        return [sep.join(units).encode("utf-8")]
    grams = [sep.join(units[i : i + k]).encode("utf-8") for i in range(len(units) - k + 1)]
    return list(dict.fromkeys(grams))


def ref_signatures(texts, num_perm=256, seed=1, k=5, scheme="affine32", char=False, cap=None):
    proto = datasketch.MinHash(num_perm=num_perm, seed=seed, scheme=scheme)
    rows = []
    for text in texts:
        m = datasketch.MinHash(num_perm=num_perm, seed=seed, scheme=scheme, permutations=proto.permutations)
        sh = ref_shingles(text, k, char)[:cap]
        for i in range(0, len(sh), 20_000):  # bounded memory on the ~1 MB document
            m.update_batch(sh[i : i + 20_000])
        rows.append(m.hashvalues)
    return np.array(rows)


def real_documents(fixtures) -> list[str]:
    """A few hundred real documents: corpus.en in 3-line documents, its first lines alone, and
    the lines of the other text fixtures."""
    lines = (fixtures / "corpus.en").read_text(encoding="utf-8").splitlines()
    docs = ["\n".join(lines[i : i + 3]) for i in range(0, len(lines), 3)]
    docs += lines[:150]
    for name in ("tinystories_sample.txt", "german.txt", "address.txt"):
        docs += (fixtures / name).read_text(encoding="utf-8").splitlines()
    return docs


def edge_documents() -> list[str]:
    """Generated edge cases; no fixture files needed."""
    rng = random.Random(20240611)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 9))) for _ in range(5000)]
    long_doc = " ".join(rng.choice(vocab) for _ in range(170_000))  # ~1 MB
    return [
        "",
        "   \n\t ",
        "!!! ... --- ???",
        "word",
        "Two words",
        "one two three four",  # fewer than K=5 tokens
        "one two three four five",  # exactly K
        "one two three four five six",
        "repeat repeat repeat repeat repeat repeat repeat repeat",
        "日本語のテキストです。東京 大阪 京都 奈良 神戸 横浜",
        "emoji 😀 between 🚀 words 👍🏽 and flags 🇫🇷 end of the line",
        "ΟΔΟΣ Σίσυφος ΣΟΦΟΣ. İstanbul straße STRASSE ǅemal ﬁne",
        "mixed_under_score and digits 123 4567 ٣٤٥ and arabic مرحبا بالعالم كيف الحال اليوم",
        "tab\tseparated\tvalues\nand\r\nnewlines\u2028and\u00a0nbsp zero\u200bwidth",
        long_doc,
    ]


@pytest.mark.parametrize("scheme", ["affine32", "legacy"])
def test_real_documents_bit_identical(shared_fixtures, scheme):
    docs = real_documents(shared_fixtures)
    assert len(docs) >= 300
    ours = minhash_signatures(docs, num_perm=256, seed=1, ngram=5, scheme=scheme, hash="sha1")
    ref = ref_signatures(docs, scheme=scheme)
    assert ours.dtype == ref.dtype == (np.uint32 if scheme == "affine32" else np.uint64)
    assert ours.shape == (len(docs), 256)
    mismatched = np.flatnonzero((ours != ref).any(axis=1))
    assert mismatched.size == 0, f"{mismatched.size} documents differ, first {mismatched[:5]}"


@pytest.mark.parametrize("scheme", ["affine32", "legacy"])
def test_edge_cases_bit_identical(scheme):
    docs = edge_documents()
    ours = minhash_signatures(docs, num_perm=256, seed=1, ngram=5, scheme=scheme)
    ref = ref_signatures(docs, scheme=scheme)
    assert ours.dtype == ref.dtype
    for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
        assert np.array_equal(a, b), f"edge case {i} ({docs[i][:40]!r}) differs"
    # Empty documents are datasketch's untouched MinHash: every value is 2^32 - 1.
    assert (ours[:3] == 0xFFFFFFFF).all()


@pytest.mark.parametrize("scheme", ["affine32", "legacy"])
def test_other_parameters_bit_identical(scheme):
    docs = edge_documents()[:-1] + [" ".join(f"tok{i % 97}" for i in range(3000))]
    for num_perm, seed, k in [(128, 42, 3), (64, 7, 1), (200, 123456, 9)]:
        ours = minhash_signatures(docs, num_perm=num_perm, seed=seed, ngram=k, scheme=scheme)
        assert np.array_equal(ours, ref_signatures(docs, num_perm, seed, k, scheme)), (num_perm, seed, k)


def test_char_shingles_bit_identical():
    docs = edge_documents()[:-1]
    ours = minhash_signatures(docs, num_perm=128, ngram=4, shingle="char")
    assert np.array_equal(ours, ref_signatures(docs, 128, 1, 4, char=True))


@pytest.mark.parametrize("cap", [1, 3, 50])
def test_max_shingles_is_first_distinct(cap):
    text = "a b c d e f a b c d e f g h " * 10 + " ".join(f"w{i}" for i in range(200))
    docs = [text, "x y z", ""]
    ours = minhash_signatures(docs, num_perm=64, max_shingles=cap)
    assert np.array_equal(ours, ref_signatures(docs, 64, cap=cap))


def test_shingle_sets_match_reference(shared_fixtures):
    docs = real_documents(shared_fixtures)[:200] + edge_documents()[:-1]
    for doc in docs:
        assert shingle_set(doc) == set(ref_shingles(doc)), doc[:60]
        assert shingle_set(doc, 3, "char") == set(ref_shingles(doc, 3, char=True)), doc[:60]
