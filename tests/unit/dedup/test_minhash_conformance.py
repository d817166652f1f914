"""Conformance: our signatures are bit-identical to datasketch 2.x MinHash (docs/dedup.md, Signatures), both schemes.

The reference shingler below is written from docs/dedup.md, Shingles independently of ``pipeline.dedup.shingles``;
datasketch is fed its shingles with its default hash (``sha1_hash32``).
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from pipeline.dedup import minhash_signatures, shingle_hashes, shingle_set, tokens
from pipeline.numba_backend import DEDUP
from tests.backends import numba_backend
from tests.oracles import require_oracle

datasketch = require_oracle("datasketch")


def ref_shingles(text: str, k: int = 5, char: bool = False) -> list[bytes]:
    """docs/dedup.md, Shingles, literally: distinct K-grams in first-occurrence order, UTF-8 encoded."""
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


# --- numba kernels vs numpy paths vs references ----------------------------------------------------


@pytest.fixture(params=["numba", "numpy"])
def backend(request):
    """Run a test once with the numba kernels and once with the pure-numpy paths."""
    with numba_backend(DEDUP, request.param == "numba"):
        yield request.param


def tricky_documents() -> list[str]:
    """Unicode corners for the code-point tokeniser (final sigma, İ, combining marks, digits of
    other scripts, a lone surrogate, NULs) plus random strings over a wide code-point mix."""
    rng = random.Random(7)
    pool = [
        chr(c)
        for c in [
            *range(0x20, 0x7F),
            0xA0,
            0xB2,
            0xB5,
            0xBA,
            0x130,
            0x1C5,
            0x300,
            0x345,
            0x3A3,
            0x3C2,
            0x660,
            0x903,
            0x1E9E,
            0x2028,
            0x2160,
            0x3000,
            0xFB01,
            0xFF21,
            0x1D400,
            0x1F600,
            0x10FFFF,
            0,
            0x5F,
        ]
    ]
    docs = [
        "ΟΔΟΣ. ΣΑΣ Σ σΣ ΣΣ",
        "İI\u0307 ǅ ǈ ß ẞ ﬃ Ⅻ ² ½ ٣ x\u0301y\u20dd z\u200d",
        "lone \ud800 surrogate \udfff here and there again",
        "nul\x00separated\x00words\x00a\x00b\x00c",
        "__ _a_ 9_9 _",
    ]
    docs += ["".join(rng.choice(pool) for _ in range(rng.randint(0, 300))) for _ in range(60)]
    return docs


def test_code_point_tokeniser_equals_re():
    require_oracle("numba")
    from pipeline.dedup.shingles_numba import utf8_units, word_table

    table = word_table()
    word = re.compile(r"\w")
    sample = list(range(0, 0x3000)) + list(range(0xD7F0, 0xE010)) + list(range(0x1D000, 0x1FA00, 7))
    assert [bool(table[c]) for c in sample] == [word.match(chr(c)) is not None for c in sample]
    docs = tricky_documents() + edge_documents()[:-1]
    lowered = [d.lower() for d in docs]
    cps = np.frombuffer("".join(lowered).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    off = np.concatenate(([0], np.cumsum([len(x) for x in lowered]))).astype(np.int64)
    for char_mode in (False, True):
        buf, lo, hi, unit_off = utf8_units(cps, off, table, char_mode)
        data = bytes(buf)
        for d, doc in enumerate(docs):
            got = [data[lo[u] : hi[u]].decode("utf-8") for u in range(unit_off[d], unit_off[d + 1])]
            toks = [t for t in re.split(r"\W", doc.lower()) if t]
            assert got == (list(" ".join(toks)) if char_mode else toks), (char_mode, doc[:40])
            assert toks == tokens(doc)


def test_sha1_kernel_equals_hashlib():
    require_oracle("numba")
    import hashlib
    import struct

    from pipeline.dedup.sha1_numba import sha1_slices

    rng = random.Random(3)
    lengths = [*range(0, 140), 183, 191, 192, 247, 255, 256, 1000, 4096]
    msgs = [bytes(rng.randrange(256) for _ in range(n)) for n in lengths]
    ends = np.cumsum([len(m) for m in msgs])
    got = sha1_slices(np.frombuffer(b"".join(msgs), dtype=np.uint8), ends - np.array(lengths), ends)
    ref = [struct.unpack("<I", hashlib.sha1(m).digest()[:4])[0] for m in msgs]
    assert got.tolist() == ref


@pytest.mark.parametrize("scheme", ["affine32", "legacy"])
def test_backends_bit_identical_to_datasketch(backend, scheme):
    docs = tricky_documents() + edge_documents()
    ours = minhash_signatures(docs, num_perm=128, seed=3, scheme=scheme)
    assert np.array_equal(ours, ref_signatures(docs, 128, 3, scheme=scheme))
    short = docs[:-1]
    ours = minhash_signatures(short, num_perm=64, ngram=3, scheme=scheme, shingle="char")
    assert np.array_equal(ours, ref_signatures(short, 64, 1, 3, scheme=scheme, char=True))
    ours = minhash_signatures(short, num_perm=64, ngram=2, scheme=scheme, max_shingles=7)
    assert np.array_equal(ours, ref_signatures(short, 64, 1, 2, scheme=scheme, cap=7))


def _fast_hash_on_both_backends(shingle: str, ngram: int, cap: int | None) -> tuple[list[str], dict]:
    """Fast-hash shingle hashes and signatures of the same documents on numba and on numpy (forced, checked)."""
    docs = tricky_documents() + edge_documents()[:-1] + [" ".join(f"w{i % 40}" for i in range(500))]
    results = {}
    for use in (True, False):
        with numba_backend(DEDUP, use):
            h, off = shingle_hashes(docs, ngram, shingle, cap, hash="xxhash")
            sigs = minhash_signatures(
                docs, num_perm=64, ngram=ngram, shingle=shingle, max_shingles=cap, hash="xxhash", scheme="legacy"
            )
        results[use] = (h, off, sigs)
    return docs, results


@pytest.mark.parametrize("shingle,ngram,cap", [("word", 5, None), ("word", 2, 9), ("char", 4, None)])
def test_fast_hash_same_on_both_backends(shingle, ngram, cap):
    docs, results = _fast_hash_on_both_backends(shingle, ngram, cap)
    for a, b in zip(results[True], results[False], strict=True):
        assert np.array_equal(a, b)
    h, off, _ = results[True]
    n_units = [len(tokens(d)) if shingle == "word" else len(" ".join(tokens(d))) for d in docs]
    expected = [min(cap or n, n - ngram + 1 if n >= ngram else min(n, 1)) for n in n_units]
    assert np.diff(off).tolist() == expected


def test_backend_comparison_sees_a_fallback_that_differs(monkeypatch):
    """The comparison above really runs two backends: numpy unit hashes off by one are noticed."""
    from pipeline.dedup import hashes

    horner = hashes._horner_unit_hashes

    def off_by_one(texts, shingle):  # noqa: ANN001, ANN202
        unit_h, unit_off = horner(texts, shingle)
        return unit_h + np.uint64(1), unit_off

    monkeypatch.setattr(hashes, "_horner_unit_hashes", off_by_one)
    _, results = _fast_hash_on_both_backends("word", 5, None)
    assert not np.array_equal(results[True][0], results[False][0])
    assert not np.array_equal(results[True][2], results[False][2])
