"""Documents over ``max_shingles`` (issue #32): their hashes are SHA-1 of the first ``max_shingles`` distinct
shingles in document order on both backends, distinct by bytes even where two shingles share a 32-bit hash, and
the numba path computes them without the per-shingle Python path (which made large documents 4x slower).

The expected values come from hashlib and from the reference shingler of tests/unit/dedup/test_minhash_conformance.py
(written from docs/dedup.md, Shingles), and from datasketch for the signatures.
"""

from __future__ import annotations

import hashlib
import importlib
import random
import struct

import numpy as np
import pytest

from pipeline.dedup import minhash_signatures, shingle_hashes
from pipeline.numba_backend import DEDUP
from tests.backends import numba_backend
from tests.oracles import require_oracle
from tests.unit.dedup.test_minhash_conformance import ref_shingles, ref_signatures


def sha1_hash32(data: bytes) -> int:
    """datasketch's ``sha1_hash32``: the first 4 bytes of SHA-1, little-endian."""
    return int(struct.unpack("<I", hashlib.sha1(data).digest()[:4])[0])


def colliding_shingles() -> tuple[str, str]:
    """Two distinct five-word shingles with the same ``sha1_hash32`` (a birthday search, about 0.2 s)."""
    seen: dict[int, str] = {}
    for i in range(1 << 20):
        text = f"k{i} same tail of words"
        h = sha1_hash32(text.encode())
        if h in seen:
            return seen[h], text
        seen[h] = text
    raise AssertionError("no 32-bit collision among 2^20 shingles")


def capped_documents() -> list[str]:
    """Documents well over small caps: repeats early and late, a hash collision inside the cap, Unicode, one
    exactly at the cap and short ones beside them."""
    a, b = colliding_shingles()
    rng = random.Random(11)
    words = ["alpha", "beta", "gamma", "épée", "日本語", "ΣΑΣ", "x", "42"]
    noisy = " ".join(rng.choice(words) for _ in range(3000))
    return [
        f"{a} one two three four five {b} " + "six seven eight nine ten " * 40 + " ".join(f"v{i}" for i in range(40)),
        "a b c d e f a b c d e f g h " * 10 + " ".join(f"w{i}" for i in range(200)),
        noisy,
        " ".join(f"u{i}" for i in range(24)),  # 20 windows: at a cap of 20, not over it
        "too short",
        "",
    ]


@pytest.fixture(params=["numba", "python"])
def backend(request):
    with numba_backend(DEDUP, request.param == "numba"):
        yield request.param


def test_the_collision_is_real():
    a, b = colliding_shingles()
    assert a != b and sha1_hash32(a.encode()) == sha1_hash32(b.encode())
    first = capped_documents()[0]
    assert ref_shingles(first).index(a.encode()) == 0 and b.encode() in ref_shingles(first)[:20]
    assert len(ref_shingles(first)) > 20  # so that the caps of 20 and below cut it after the collision


@pytest.mark.parametrize("cap", [1, 2, 7, 20, 333])
def test_capped_hashes_are_sha1_of_first_distinct(backend, cap):
    docs = capped_documents()
    h, off = shingle_hashes(docs, 5, "word", cap)
    for d, doc in enumerate(docs):
        got = h[off[d] : off[d + 1]].tolist()
        ref = ref_shingles(doc)
        if len(ref) > cap or backend == "python":
            assert got == [sha1_hash32(s) for s in ref[:cap]], (cap, d)
        else:  # numba lists each window of an uncapped document, repeats included
            assert set(got) == {sha1_hash32(s) for s in ref}, (cap, d)


@pytest.mark.parametrize("cap", [3, 25])
def test_capped_char_shingles(backend, cap):
    docs = capped_documents()
    h, off = shingle_hashes(docs, 4, "char", cap)
    for d, doc in enumerate(docs):
        ref = ref_shingles(doc, 4, char=True)
        if len(ref) > cap:
            assert h[off[d] : off[d + 1]].tolist() == [sha1_hash32(s) for s in ref[:cap]], (cap, d)


def test_capped_large_documents_equal_datasketch(backend, shared_fixtures):
    """Real text joined into documents of 200-400 kB, repeated in part, capped below their distinct count."""
    text = (shared_fixtures / "corpus.en").read_text(encoding="utf-8")
    docs = [text + text + text, text[60_000:] + text, text[:5000]]
    cap = 15_000
    assert all(len(ref_shingles(d)) > cap for d in docs[:2])
    ours = minhash_signatures(docs, num_perm=64, max_shingles=cap)
    assert np.array_equal(ours, ref_signatures(docs, 64, cap=cap))


def test_capped_documents_stay_compiled(monkeypatch):
    """On numba, a capped document no longer goes through the per-shingle Python shingler."""
    from pipeline.dedup import hashes

    shingles_module = importlib.import_module("pipeline.dedup.shingles")  # the package exports a function so named

    def refuse(*args: object) -> None:
        raise AssertionError("the Python shingler ran")

    monkeypatch.setattr(shingles_module, "unit_shingles", refuse)
    monkeypatch.setattr(hashes, "unit_shingles", refuse)
    docs = capped_documents()
    with numba_backend(DEDUP, True):
        h, off = shingle_hashes(docs, 5, "word", 7)
    assert np.diff(off).tolist()[:3] == [7, 7, 7]
    with numba_backend(DEDUP, False), pytest.raises(AssertionError, match="Python shingler"):
        shingle_hashes(docs, 5, "word", 7)


def test_same_bytes_equals_python_comparison():
    require_oracle("numba")
    from pipeline.dedup.shingles_numba import same_bytes

    rng = random.Random(5)
    data = bytes(rng.choice(b"ab") for _ in range(4000))
    buf = np.frombuffer(data, dtype=np.uint8)
    for _ in range(3000):
        n, m = rng.randrange(0, 30), rng.randrange(0, 30) if rng.random() < 0.2 else None
        a, b = rng.randrange(0, 4000 - 30), rng.randrange(0, 4000 - 30)
        m = n if m is None else m
        assert same_bytes(buf, a, a + n, b, b + m) == (data[a : a + n] == data[b : b + m]), (a, n, b, m)


@pytest.mark.parametrize("cap", [2, 7, 20])
def test_capped_pair_jaccards_equal_reference_sets(backend, cap):
    """Verification's exact Jaccard of capped documents: the sets are the first ``cap`` distinct shingles."""
    from pipeline.dedup.pair_jaccard import pair_jaccards

    docs = capped_documents()
    docs += [docs[0].replace("six", "sixty"), docs[0].replace(" one ", " uno "), docs[1][::-1], docs[0][40:]]
    a, b = np.meshgrid(np.arange(len(docs)), np.arange(len(docs)))
    got = pair_jaccards(docs, a.ravel(), b.ravel(), 5, "word", cap)
    sets = [set(ref_shingles(d)[:cap]) for d in docs]
    expected = [
        1.0 if not sets[i] and not sets[j] else len(sets[i] & sets[j]) / len(sets[i] | sets[j])
        for i, j in zip(a.ravel(), b.ravel(), strict=True)
    ]
    assert got.tolist() == expected
    assert 0 < np.mean(got == 1.0) < 1 and np.mean((got > 0) & (got < 1)) > 0


def test_capped_pairs_stay_compiled(monkeypatch):
    from pipeline.dedup import pair_jaccard

    def refuse(*args: object) -> None:
        raise AssertionError("the Python shingle sets ran")

    monkeypatch.setattr(pair_jaccard, "shingle_set", refuse)
    docs = capped_documents()
    with numba_backend(DEDUP, True):
        got = pair_jaccard.pair_jaccards(docs, np.array([0, 1, 2]), np.array([0, 2, 1]), 5, "word", 7)
    assert got.tolist()[0] == 1.0
    with numba_backend(DEDUP, False), pytest.raises(AssertionError, match="Python shingle sets"):
        pair_jaccard.pair_jaccards(docs, np.array([0]), np.array([1]), 5, "word", 7)
