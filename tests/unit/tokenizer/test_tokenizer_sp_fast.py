"""Our numba encoder for SentencePiece BPE models with byte fallback (issue #43 item 6): ids identical to
``sentencepiece.SentencePieceProcessor.encode`` for Mistral's tokenizer.model.v1 and models trained here by
sentencepiece itself, on real multilingual text and generated Unicode, through each of the kernel's paths; models it
does not cover stay with the library; the tokenize stage's batch step writes the library's shard."""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.tokenizer.encode import WordCache
from pipeline.tokenizer.library import LibraryTokenizer
from pipeline.tokenizer.sp_fast import SentencePieceBPE, read_model
from tests.oracles import require_oracle
from tests.tokenizer_kinds import doc_texts, fast_and_library_shards, mistral_v1_path


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return doc_texts(1_500_000)


def _train(texts: list[str], **options: Any) -> bytes:
    """A SentencePiece model trained by sentencepiece itself on ``texts``."""
    spm = require_oracle("sentencepiece")
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(t for doc in texts for t in doc.splitlines() if t.strip()),
        model_writer=out,
        vocab_size=1500,
        character_coverage=0.995,
        minloglevel=2,
        **options,
    )
    return out.getvalue()


FAST = dict(model_type="bpe", byte_fallback=True, normalization_rule_name="identity", remove_extra_whitespaces=False)


@pytest.fixture(scope="module")
def cases(texts):
    """Per case: (our tokenizer, pickled as Spark ships it; sentencepiece's own processor)."""
    spm = require_oracle("sentencepiece")
    models = {
        "mistral-v1": mistral_v1_path().read_bytes(),
        "trained": _train(texts[::8], **FAST),
        "trained-no-prefix": _train(texts[1::8], add_dummy_prefix=False, **FAST),
    }
    out = {}
    for name, model in models.items():
        tok = LibraryTokenizer("sentencepiece", model, name)
        assert isinstance(tok.fast, SentencePieceBPE), name
        out[name] = (pickle.loads(pickle.dumps(tok)), spm.SentencePieceProcessor(model_proto=model))
    return out


CASES = ("mistral-v1", "trained", "trained-no-prefix")


def _kernel_ids(fast: SentencePieceBPE, docs: list[str], **kernel: Any) -> list[list[int]]:
    """The kernel's ids of each of ``docs`` with the given ``encode_utf8`` options."""
    parts = [d.encode("utf-8") for d in docs]
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
    cache = kernel.pop("cache", WordCache(1 << 12))
    ids, ends = fast.encode_utf8(np.frombuffer(b"".join(parts), dtype=np.uint8), offsets, cache, **kernel)
    bounds = [0, *ends.tolist()]
    return [ids[bounds[i] : bounds[i + 1]].tolist() for i in range(len(docs))]


def test_model_fields_read_as_protobuf_reads_them():
    """Our reader of the model file against the protobuf classes sentencepiece ships."""
    pb = require_oracle("sentencepiece.sentencepiece_model_pb2")
    data = mistral_v1_path().read_bytes()
    proto = pb.ModelProto()
    proto.ParseFromString(data)
    spec = read_model(data)
    assert spec.pieces == [(p.piece, p.score, p.type) for p in proto.pieces]
    assert (spec.model_type, spec.byte_fallback, spec.whitespace_as_suffix) == (
        proto.trainer_spec.model_type,
        proto.trainer_spec.byte_fallback,
        proto.trainer_spec.treat_whitespace_as_suffix,
    )
    norm = proto.normalizer_spec
    assert (spec.charsmap, spec.add_dummy_prefix, spec.remove_extra_whitespaces, spec.escape_whitespaces) == (
        norm.precompiled_charsmap,
        norm.add_dummy_prefix,
        norm.remove_extra_whitespaces,
        norm.escape_whitespaces,
    )


def test_mistral_v1_takes_every_cut_and_the_run_split(cases):
    fast = cases["mistral-v1"][0].fast
    assert fast.space_cuts and fast.run_split and fast.tables[2].size > 0


@pytest.mark.parametrize("case", CASES)
def test_ids_identical_to_sentencepiece_on_real_multilingual_text(cases, texts, case):
    tok, lib = cases[case]
    ours = tok.encode_batch(texts)
    assert sum(map(len, ours)) > 100_000
    assert ours == lib.encode(texts)


@pytest.mark.parametrize(
    "kernel",
    [
        {"heap_after": 0},  # every piece merged with the heap
        {"heap_after": 1 << 30, "cache": WordCache(0)},  # scanning its pairs, no cache
        {"bigrams": False},  # cut at spaces and lone characters only
        {"run_split": False},
    ],
    ids=["heap", "scan-no-cache", "no-bigrams", "no-run-split"],
)
def test_each_kernel_path_gives_the_same_ids(cases, texts, kernel):
    tok, lib = cases["mistral-v1"]
    fast = pickle.loads(pickle.dumps(tok.fast))
    if kernel.pop("bigrams", True) is False:
        tables = list(fast.tables)
        tables[2] = np.zeros(0, np.uint8)
        fast.tables = tuple(tables)
    if kernel.pop("run_split", True) is False:
        fast.run_split = False
    docs = texts[:60] + ["", " ", "  \n  x", "\u2581\u2581 y", "a" * 300, " " * 100 + "z", "日本語\n\n\t"]
    assert _kernel_ids(fast, docs, **kernel) == lib.encode(docs)


UNICODE = st.lists(
    st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.characters(whitelist_categories=("Mn", "Me", "Mc")),
        st.characters(whitelist_categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "No", "Zs", "Pd", "Sm")),
        st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)),
        st.sampled_from([" " * 40, "\t\t  \n", "\r\n", "\r\n\r\n", " \n ", "\n", "0123456789", "١٢٣", "e\u0301"]),
        st.sampled_from(["'s", "the", " the", "    def", "日本語", "Ünïcödé", "  x", "\u00a0\u2003", "🙂🏽", "a/b"]),
        st.sampled_from(["\u2581", "\u2581\u2581x", " ?!\r\n", "</s>", "<s>", "<unk>", "\u3000", "\x00", "全心全意为"]),
    ),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("case", CASES)
def test_ids_identical_to_sentencepiece_on_generated_unicode(cases, case):
    tok, lib = cases[case]

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(UNICODE, min_size=1, max_size=4))
    def check(docs: list[str]) -> None:
        assert tok.encode_batch(docs) == [lib.encode(t) for t in docs]
        assert _kernel_ids(tok.fast, docs, heap_after=0) == [lib.encode(t) for t in docs]

    check()


def test_models_the_kernel_does_not_cover_stay_with_the_library(texts):
    """A unigram model, SentencePiece's default normalizer (nmt_nfkc, extra whitespace removed), no byte fallback:
    no fast path, and the library's ids."""
    spm = require_oracle("sentencepiece")
    for options in (
        {**FAST, "model_type": "unigram"},
        {"model_type": "bpe", "byte_fallback": True},
        {**FAST, "byte_fallback": False},
    ):
        model = _train(texts[2::16], **options)
        tok = LibraryTokenizer("sentencepiece", model)
        assert tok.fast is None, options
        docs = texts[:5] + ["  two  spaces ", "ｆｕｌｌ width"]
        assert tok.encode_batch(docs) == spm.SentencePieceProcessor(model_proto=model).encode(docs)


def test_a_lone_surrogate_goes_to_the_library(cases):
    tok, lib = cases["mistral-v1"]
    with pytest.raises(TypeError):  # sentencepiece refuses it, and so does the fast path (it asks the library)
        lib.encode(["a\ud800b"])
    with pytest.raises(TypeError):
        tok.encode_batch(["fine", "a\ud800b"])


@pytest.mark.parametrize("bos", [(), (1,)])
def test_stage_batch_step_writes_the_librarys_shard(cases, texts, tmp_path, bos):
    tok, _ = cases["mistral-v1"]
    docs: list[str | None] = [*texts[:30], "", "x", None, "  indented\n    code"]
    fast, library = fast_and_library_shards(tok, docs, tmp_path, "uint16", 2, bos)
    assert fast == library
