"""Batch exact Jaccard for verification (issue #16): equal to set arithmetic on independently built shingles."""

from __future__ import annotations

import random
import re

import numpy as np
import pyarrow as pa
import pytest

from pipeline.dedup.batches import star_jaccards
from pipeline.dedup.pair_jaccard import pair_jaccards
from pipeline.numba_backend import DEDUP
from tests.backends import numba_backend
from tests.oracles import require_oracle

VOCAB = ["alpha", "beta", "gamma", "Delta", "épée", "naïve", "日本語", "σίσυφος", "x", "42", "a_b", "ΣΑΣ"]


def reference_shingles(text: str, k: int, kind: str = "word", cap: int | None = None) -> set[bytes]:
    """docs/dedup.md, Shingles, written out independently: lower-case, \\W split, K-grams joined,
    first ``cap`` distinct."""
    toks = [t for t in re.split(r"\W+", text.lower()) if t]
    units = toks if kind == "word" else list(" ".join(toks))
    sep = " " if kind == "word" else ""
    if not units:
        return set()
    grams = [sep.join(units)] if len(units) <= k else [sep.join(units[i : i + k]) for i in range(len(units) - k + 1)]
    seen: list[bytes] = []
    for g in grams:
        b = g.encode("utf-8")
        if b not in seen:
            seen.append(b)
    return set(seen[:cap] if cap else seen)


def reference_jaccard(x: str, y: str, k: int, kind: str = "word", cap: int | None = None) -> float:
    a, b = reference_shingles(x, k, kind, cap), reference_shingles(y, k, kind, cap)
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def random_texts(rng: random.Random, n: int) -> list[str]:
    """Near copies (mutated), repeats inside a text, Unicode, short and empty texts."""
    base = [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 60))) for _ in range(max(1, n // 3))]
    texts = []
    for _ in range(n):
        words = rng.choice(base).split()
        for _ in range(rng.randint(0, 4)):
            if words:
                words[rng.randrange(len(words))] = rng.choice(VOCAB)
        texts.append(rng.choice([" ", ", ", "\n", "--"]).join(words * rng.choice([1, 1, 2])))
    return texts + ["", "   ...   ", "one", "one two"]


@pytest.fixture(params=[True, False], ids=["numba", "python"])
def backend(request):
    with numba_backend(DEDUP, request.param):
        yield request.param


@pytest.mark.parametrize(
    "k,kind,cap",
    [(5, "word", None), (2, "word", None), (1, "word", None), (5, "char", None), (3, "word", 7), (5, "word", 100_000)],
)
def test_pair_jaccards_equal_reference_sets(backend, k, kind, cap):
    rng = random.Random(k * 31 + (cap or 0))
    texts = random_texts(rng, 120)
    a = np.array([rng.randrange(len(texts)) for _ in range(600)])
    b = np.array([rng.randrange(len(texts)) for _ in range(600)])
    got = pair_jaccards(texts, a, b, k, kind, cap)
    expected = [reference_jaccard(texts[i], texts[j], k, kind, cap) for i, j in zip(a, b, strict=True)]
    assert got.tolist() == expected  # the same floats, not approximately
    assert 0 < (got == 1.0).mean() < 1 and (got > 0).mean() < 1, "the pairs cover equal, overlapping and disjoint"


def test_equal_hashes_are_checked_byte_by_byte():
    """Force every shingle hash to collide: the compiled intersection must still count only equal bytes."""
    require_oracle("numba")
    from pipeline.dedup.hashes import _codepoints
    from pipeline.dedup.pair_jaccard_numba import distinct_shingles
    from pipeline.dedup.pair_jaccard_numba import pair_jaccards as compiled
    from pipeline.dedup.shingles_numba import utf8_units, word_table

    texts = random_texts(random.Random(3), 30)
    buf, lo, hi, unit_off = utf8_units(*_codepoints(texts), word_table(), False)
    hashes, start, end, off = distinct_shingles(buf, lo, hi, unit_off, 2)
    a, b = np.arange(len(texts)), np.arange(len(texts))[::-1].copy()
    got = compiled(buf, np.zeros_like(hashes), start, end, off, a, b)
    assert got.tolist() == [reference_jaccard(texts[i], texts[j], 2) for i, j in zip(a, b, strict=True)]


def test_bad_pair_arrays():
    with pytest.raises(ValueError, match="one shape"):
        pair_jaccards(["a"], np.array([0]), np.array([0, 0]))
    assert pair_jaccards(["a"], np.array([], dtype=np.int64), np.array([], dtype=np.int64)).shape == (0,)


def _star_batches(rows: list[tuple[int, int, int, str]], size: int) -> list[pa.RecordBatch]:
    table = pa.table(
        {
            "head": [r[0] for r in rows],
            "role": [r[1] for r in rows],
            "doc_id": [r[2] for r in rows],
            "text": [r[3] for r in rows],
        },
        schema=pa.schema([("head", pa.int64()), ("role", pa.int32()), ("doc_id", pa.int64()), ("text", pa.string())]),
    )
    return table.to_batches(max_chunksize=size)


@pytest.mark.parametrize("batch_size", [1, 2, 5, 1000])
def test_star_jaccards_across_batch_boundaries(backend, batch_size):
    rng = random.Random(batch_size)
    texts = random_texts(rng, 40)
    rows, expected = [], {}
    for head in range(0, 40, 8):
        rows.append((head, 0, head, texts[head]))
        for member in range(head + 1, head + rng.randint(1, 8)):
            rows.append((head, 1, member, texts[member]))
            expected[(member, head)] = reference_jaccard(texts[member], texts[head], 5)
    out = pa.Table.from_batches(list(star_jaccards(iter(_star_batches(rows, batch_size)), 5, "word", None)))
    got = {(s, d): j for s, d, j in zip(*(out.column(c).to_pylist() for c in ("src", "dst", "jaccard")), strict=True)}
    assert got == expected


def test_star_jaccards_refuses_members_without_their_head():
    rows = [(1, 0, 1, "a b c"), (1, 1, 2, "a b c"), (3, 1, 4, "a b")]
    with pytest.raises(ValueError, match="star 3: members arrived without their head"):
        list(star_jaccards(iter(_star_batches(rows, 10)), 5, "word", None))


def test_token_counts_equal_regex_tokens(backend):
    from pipeline.dedup.token_counts import token_counts

    texts = random_texts(random.Random(9), 200) + ["ΣΑΣ σίσυφος", "a_b c--d", "e\u0301 x", "İstanbul ǅ"]
    expected = [len([t for t in re.split(r"\W+", x.lower()) if t]) for x in texts]
    assert token_counts(texts).tolist() == expected
    assert token_counts([]).tolist() == []
