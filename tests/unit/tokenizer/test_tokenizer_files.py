"""Files we write load in Hugging Face ``tokenizers`` and tiktoken, and encode exactly like us."""

from __future__ import annotations

import json

import pytest

from pipeline.config import ConfigError, load_config_text
from pipeline.tokenizer import BPETokenizer
from pipeline.tokenizer.files import bytes_to_unicode, str_to_token
from pipeline.tokenizer.run_files import load_tokenizer
from tests.oracles import require_oracle

tokenizers = require_oracle("tokenizers")
from test_tokenizer_encode import EOT, TEXTS, _gpt2_table, tiktoken_from_vocab  # noqa: E402


@pytest.fixture(scope="module")
def saved(shared_fixtures, tmp_path_factory):
    tok = BPETokenizer.train(shared_fixtures / "corpus.en", vocab_size=500, special_tokens=[EOT])
    out = tmp_path_factory.mktemp("bpe500")
    tok.save(out)
    return tok, out


@pytest.fixture(scope="module")
def fixture_texts(shared_fixtures) -> list[str]:
    texts = [(shared_fixtures / n).read_text(encoding="utf-8") for n in TEXTS]
    return texts + [EOT.join(texts), "  x\u00a0y \U0001f600 don't\r\n\t\t1234567 ---", ""]


def test_bytes_to_unicode_matches_independent_table():
    assert {c: b for b, c in bytes_to_unicode().items()} == _gpt2_table()


def test_str_to_token_decodes_every_gpt2_string_like_an_independent_table(shared_fixtures):
    """Every token string of GPT-2's vocab.json and merges.txt decodes to the bytes the independent table gives; a
    character outside the table (below 256 or above it) raises KeyError naming the first such character."""
    table = _gpt2_table()
    vocab = json.loads((shared_fixtures / "gpt2_vocab.json").read_text(encoding="utf-8"))
    lines = (shared_fixtures / "gpt2_merges.txt").read_text(encoding="utf-8").splitlines()
    strings = [s for s in vocab if s != EOT] + [side for line in lines if line[:1] != "#" for side in line.split(" ")]
    assert len(strings) > 150_000
    assert [str_to_token(s) for s in strings] == [bytes(table[c] for c in s) for s in strings]
    assert str_to_token("") == b""
    bad = [("a b", " "), ("Ġ\x00", "\x00"), ("x\u0144", "\u0144"), ("\uffffĠ", "\uffff"), ("é\n\r", "\n")]
    for text, first_bad in bad:
        with pytest.raises(KeyError) as info:
            str_to_token(text)
        assert info.value.args == (first_bad,)


def test_load_tokenizer_gives_the_gpt2_files_and_names_a_bad_merges_file(shared_fixtures, tmp_path):
    """The tokenize stage's loader decodes GPT-2's files as the independent table does; a merges.txt whose token
    holds a character outside GPT-2's table is a ConfigError naming ``tokenizer.merges``."""
    vocab, merges = shared_fixtures / "gpt2_vocab.json", shared_fixtures / "gpt2_merges.txt"
    head = f"output: {tmp_path}/run\nsources: [{{name: web, paths: [{tmp_path}/x]}}]\n"
    loaded = load_tokenizer(load_config_text(head + f"tokenizer: {{vocab: '{vocab}', merges: '{merges}'}}\n"))
    table = _gpt2_table()
    encoder = json.loads(vocab.read_text(encoding="utf-8"))
    assert isinstance(loaded, BPETokenizer) and loaded.special_ids == {EOT: 50256}
    assert loaded.vocab == {i: s.encode() if s == EOT else bytes(table[c] for c in s) for s, i in encoder.items()}
    text = merges.read_text(encoding="utf-8")
    lines = [line.split(" ") for line in text.splitlines() if line and not line.startswith("#version")]
    assert loaded.merges == [(bytes(table[c] for c in a), bytes(table[c] for c in b)) for a, b in lines]
    bad = tmp_path / "merges.txt"
    bad.write_text("#version: 0.2\nĠ t\nh\u0144 e\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_tokenizer(load_config_text(head + f"tokenizer: {{vocab: '{vocab}', merges: '{bad}'}}\n"))
    assert "tokenizer.merges" in str(info.value) and "KeyError" in str(info.value)


def test_file_formats(saved):
    tok, out = saved
    lines = (out / "merges.txt").read_text(encoding="utf-8").split("\n")
    # Megatron's GPT2 tokenizer drops the first line (header) and the last (empty after final newline)
    assert lines[0] == "#version: 0.2" and lines[-1] == "" and len(lines[1:-1]) == len(tok.merges)
    vocab = json.loads((out / "vocab.json").read_text(encoding="utf-8"))
    assert len(vocab) == 500 and vocab[EOT] == 499 and vocab["Ġ"] == 32 and vocab["!"] == 33
    again = BPETokenizer.from_files(out / "vocab.json", out / "merges.txt", special_tokens=[EOT])
    assert again.vocab == tok.vocab and again.merges == tok.merges and again.special_ids == tok.special_ids


def test_gpt2_files_round_trip(shared_fixtures, tmp_path):
    gpt2 = BPETokenizer.from_files(
        shared_fixtures / "gpt2_vocab.json", shared_fixtures / "gpt2_merges.txt", special_tokens=[EOT]
    )
    gpt2.save(tmp_path)
    original = json.loads((shared_fixtures / "gpt2_vocab.json").read_text(encoding="utf-8"))
    assert json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8")) == original
    ours = (tmp_path / "merges.txt").read_text(encoding="utf-8").splitlines()
    theirs = (shared_fixtures / "gpt2_merges.txt").read_text(encoding="utf-8").splitlines()
    assert ours[0] == "#version: 0.2"
    assert ours[1:] == [line for line in theirs if line and not line.startswith("#version")]


def test_hf_tokenizer_json_encodes_like_us(saved, fixture_texts):
    tok, out = saved
    hf = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    assert hf.get_vocab_size() == 500 and hf.token_to_id(EOT) == 499
    for text in fixture_texts:
        ids = tok.encode(text)
        assert hf.encode(text, add_special_tokens=False).ids == ids
        assert hf.decode(ids, skip_special_tokens=False) == text


def test_hf_loads_vocab_and_merges(saved, fixture_texts):
    tok, out = saved
    from tokenizers import decoders, models, pre_tokenizers

    hf = tokenizers.Tokenizer(models.BPE.from_file(str(out / "vocab.json"), str(out / "merges.txt")))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([EOT])
    for text in fixture_texts:
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text)


def test_tiktoken_loads_our_vocab(saved, fixture_texts):
    tok, out = saved
    enc = tiktoken_from_vocab(out / "vocab.json", {EOT: 499}, name="ours-500")
    for text in fixture_texts:
        assert enc.encode(text, allowed_special={EOT}) == tok.encode(text)
