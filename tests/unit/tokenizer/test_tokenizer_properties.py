"""Property tests: the numba encoder, the pure-Python reference and tiktoken give the same ids on
random Unicode (special-token strings, lone surrogates, long whitespace and digit runs, mixed
scripts), through every entry point the pipeline uses (str, str batch, UTF-8 buffer batch)."""

from __future__ import annotations

import unicodedata
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tokenizer_encode import EOT, tiktoken_from_vocab

from pipeline.tokenizer import BPETokenizer
from pipeline.tokenizer.encode import numba_enabled, scrub_surrogates, set_numba
from tests.oracles import require_oracle

require_oracle("tiktoken")

SCRIPTS = "abcXYZ ДжщЯ αβΩ 中文字 日本語 ひらがな 한국어 🙂👍🏽🚀🇩🇪 é\u0301 \u200d\ufe0f ١٢٣ ४५६ ½ Ⅻ ß'"
PIECES = st.one_of(
    st.text(max_size=20),  # any code point hypothesis draws (it mixes ASCII, controls, astral, ...)
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),  # surrogates
    st.sampled_from(
        [
            EOT,
            EOT + EOT,
            "<|endoftext",
            "|>",
            "'s",
            "'LL",
            "'ve",
            "'re",
            "'",
            " ",
            "\n",
            "\t",
            "\r\n",
            "\u00a0",
            "\u3000",
            "\u2028",
            "\x85",
            "\x00",
        ]
    ),
    st.builds(
        lambda unit, n: unit * n,
        st.sampled_from([" ", "\n", "\t", " \n", "0", "7", "\u0663", "x", "🙂"]),
        st.integers(1, 300),
    ),
    st.text(st.sampled_from(SCRIPTS), max_size=40),
)
TEXTS = st.lists(PIECES, max_size=12).map("".join)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _gpt2(shared_fixtures, numba: bool) -> BPETokenizer:
    previous = set_numba(numba)
    try:
        return BPETokenizer.from_files(
            shared_fixtures / "gpt2_vocab.json", shared_fixtures / "gpt2_merges.txt", [EOT], cache_size=512
        )  # small: clears often while hypothesis runs
    finally:
        set_numba(previous)


@pytest.fixture(scope="module")
def encoders(shared_fixtures) -> list[BPETokenizer]:
    """The numba encoder unless PIPELINE_TOKENIZER_NUMBA=0 turns it off, then the pure-Python reference (last)."""
    slow = _gpt2(shared_fixtures, False)
    assert slow._numba is None
    if not numba_enabled():
        warnings.warn(
            "numba path switched off by PIPELINE_TOKENIZER_NUMBA=0: only the pure-Python path is tested", stacklevel=1
        )
        return [slow]
    fast = _gpt2(shared_fixtures, True)
    assert fast._numba is not None
    return [fast, slow]


@pytest.fixture(scope="module")
def oracle(shared_fixtures):
    return tiktoken_from_vocab(shared_fixtures / "gpt2_vocab.json", {EOT: 50256})


def tiktoken_comparable(text: str) -> bool:
    """Whether tiktoken is an oracle for ``text``: every code point is assigned in this Python's
    Unicode database. Pre-token classes come from the ``regex`` module (docs/tokenizer.md, Pre-tokenizer), whose Unicode
    tables may be newer than tiktoken's: a code point assigned since (e.g. U+18E00, a letter for
    ``regex`` 2026) is classed differently there. The numba path must equal the reference anyway."""
    return all(unicodedata.category(c) != "Cn" for c in scrub_surrogates(text))


@SETTINGS
@given(text=TEXTS)
def test_encode_equals_reference_and_tiktoken(encoders, oracle, text):
    reference = encoders[-1]
    ordinary, special = reference.encode(text, split_special=False), reference.encode(text)
    if tiktoken_comparable(text):
        assert ordinary == oracle.encode_ordinary(text)
        assert special == oracle.encode(text, allowed_special="all")
    for tok in encoders[:-1]:
        assert tok.encode(text, split_special=False) == ordinary
        assert tok.encode(text) == special


@SETTINGS
@given(texts=st.lists(TEXTS, max_size=6), eod=st.sampled_from([-1, 50256]))
def test_batches_equal_per_text_encoding(encoders, oracle, texts, eod):
    """Special-token strings are plain text in the batch paths (the tokenize stage's contract)."""
    tail = [eod] if eod >= 0 else []
    expected = [encoders[-1].encode(t, split_special=False) + tail for t in texts]
    assert all(
        e == oracle.encode_ordinary(t) + tail for e, t in zip(expected, texts, strict=True) if tiktoken_comparable(t)
    )
    raw = [scrub_surrogates(t).encode("utf-8") for t in texts]
    data = np.frombuffer(b"pad" + b"".join(raw), dtype=np.uint8)  # texts need not start at byte 0
    offsets = 3 + np.concatenate([[0], np.cumsum([len(r) for r in raw])]).astype(np.int64)
    for tok in encoders:
        ids, ends = tok.encode_utf8_batch(data, offsets, append_id=eod)
        assert ids.dtype == np.int32 and ends.shape == (len(texts),)
        assert _split(ids, ends) == expected
        if eod < 0:
            ids, ends = tok.encode_ordinary_batch(texts)
            assert _split(ids, ends) == expected


def _split(ids: np.ndarray, ends: np.ndarray) -> list[list[int]]:
    starts = np.concatenate([[0], ends]).astype(np.int64)[:-1]
    return [ids[s:e].tolist() for s, e in zip(starts, ends, strict=True)]


def test_surrogates_resolved_as_tiktoken_does(encoders, oracle):
    pair, lone = "\ud83d\ude00", "a\udc80b\ud800"
    for tok in encoders:
        assert tok.encode(pair) == tok.encode("\U0001f600") == oracle.encode_ordinary(pair)
        assert tok.encode(lone) == tok.encode("a\ufffdb\ufffd") == oracle.encode_ordinary(lone)


def test_long_words_and_runs_identical(encoders, oracle):
    """Pre-tokens longer than the cache's 16 inline bytes and than 4 ids, repeated (cache hits)."""
    texts = [
        "x" * 5000,
        "1234567890" * 300,
        " " * 3000 + "a",
        "\n\n\t " * 500,
        "🙂" * 700,
        "Donaudampfschifffahrtsgesellschaftskapitän " * 20,
        "antidisestablishmentarianism " * 30,
    ]
    for text in texts:
        expected = oracle.encode_ordinary(text)
        for tok in encoders:
            assert tok.encode(text) == expected and tok.encode(text) == expected  # the second from the cache
