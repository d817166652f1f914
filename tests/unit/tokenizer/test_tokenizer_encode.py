"""Conformance of encoding/decoding with GPT-2's files against tiktoken (the oracle), built offline."""

from __future__ import annotations

import io
import json
import pickle

import pytest

from pipeline.tokenizer import GPT2_PATTERN, BPETokenizer
from tests.oracles import require_oracle

tiktoken = require_oracle("tiktoken")

EOT = "<|endoftext|>"
DOUBLE = EOT + EOT
TEXTS = ["corpus.en", "tinystories_sample.txt", "address.txt", "german.txt"]


def _gpt2_table() -> dict[str, int]:
    """GPT-2's bytes-to-unicode table, written out independently of pipeline.tokenizer.files."""
    keep = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in keep}
    rest = [b for b in range(256) if b not in keep]
    table.update({chr(256 + i): b for i, b in enumerate(rest)})
    return table


def tiktoken_from_vocab(vocab_path, specials: dict[str, int], name: str = "gpt2-offline"):
    """A tiktoken Encoding from a GPT-2 style vocab.json (ranks = ids), no network."""
    table = _gpt2_table()
    with open(vocab_path, encoding="utf-8") as f:
        encoder = json.load(f)
    ranks = {bytes(table[c] for c in s): i for s, i in encoder.items() if s not in specials}
    return tiktoken.Encoding(name=name, pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens=specials)


@pytest.fixture(scope="module")
def gpt2(shared_fixtures) -> BPETokenizer:
    return BPETokenizer.from_files(
        shared_fixtures / "gpt2_vocab.json", shared_fixtures / "gpt2_merges.txt", special_tokens=[EOT]
    )


@pytest.fixture(scope="module")
def oracle(shared_fixtures):
    return tiktoken_from_vocab(shared_fixtures / "gpt2_vocab.json", {EOT: 50256})


@pytest.fixture(scope="module")
def texts(shared_fixtures) -> dict[str, str]:
    return {name: (shared_fixtures / name).read_text(encoding="utf-8") for name in TEXTS}


def test_gpt2_layout(gpt2):
    assert len(gpt2) == 50257 and gpt2.vocab_size == 50257
    assert gpt2.token_id(EOT) == 50256 and gpt2.token_id(b"<|endoftext|>") == 50256
    assert gpt2.token_id(b" the") == 262  # GPT-2's well-known id of " the"
    assert len(gpt2.merges) == 50000


@pytest.mark.parametrize("name", TEXTS)
def test_encode_equals_tiktoken(gpt2, oracle, texts, name):
    text = texts[name]  # tinystories_sample.txt holds <|endoftext|> separators itself
    ids = gpt2.encode(text)
    assert ids == oracle.encode(text, allowed_special={EOT})
    assert gpt2.decode(ids) == text
    plain = text.replace(EOT, "\n")
    assert EOT not in plain
    assert gpt2.encode(plain) == oracle.encode_ordinary(plain)


@pytest.mark.parametrize("name", TEXTS)
def test_encode_with_special_equals_tiktoken(gpt2, oracle, texts, name):
    paragraphs = texts[name].split("\n\n")
    text = EOT.join(paragraphs) + EOT + " tail" + EOT
    ids = gpt2.encode(text)
    assert ids == oracle.encode(text, allowed_special={EOT})
    assert ids.count(50256) == text.count(EOT)
    assert gpt2.decode(ids) == text
    # split_special=False treats the marker as ordinary text, like tiktoken's encode_ordinary
    assert gpt2.encode(text, split_special=False) == oracle.encode_ordinary(text)


def test_overlapping_special_tokens_prefer_longer(shared_fixtures, oracle):
    tok = BPETokenizer.from_files(
        shared_fixtures / "gpt2_vocab.json", shared_fixtures / "gpt2_merges.txt", special_tokens=[EOT, DOUBLE]
    )
    assert tok.token_id(DOUBLE) == 50257  # not in GPT-2's vocab.json: next free id
    text = f"Hello{DOUBLE} world{EOT}!{EOT * 3}\n end"
    plain = oracle.encode_ordinary
    # documented expectation: leftmost match, longest alternative first, ordinary pieces as tiktoken
    expected = plain("Hello") + [50257] + plain(" world") + [50256] + plain("!") + [50257, 50256]
    expected += plain("\n end")
    assert tok.encode(text) == expected
    assert tok.decode(expected) == text
    assert list(tok.encode_iterable(io.StringIO(text), chunk_chars=5)) == expected


def test_decode_invalid_utf8_replaced(gpt2):
    ids = gpt2.encode("é")  # one token for the two bytes c3 a9
    raw = gpt2.decode_bytes(ids)
    assert raw == "é".encode()
    half = [gpt2.token_id(b"\xc3"), gpt2.token_id(b"a")]
    assert gpt2.decode(half) == "\ufffda"


@pytest.mark.parametrize("chunk_chars", [1, 7, 64, 1 << 14])
def test_encode_iterable_equals_encode(gpt2, texts, chunk_chars):
    text = texts["corpus.en"][:20000] + EOT + "  \n\n\t x" + EOT + EOT + "\n" + texts["german.txt"] + "   "
    expected = gpt2.encode(text)
    assert list(gpt2.encode_iterable(io.StringIO(text), chunk_chars=chunk_chars)) == expected
    lines = io.StringIO(text).readlines()  # an iterable without read(): consumed line by line
    assert list(gpt2.encode_iterable(lines, chunk_chars=chunk_chars)) == expected


def test_encode_iterable_whitespace_edge_cases(gpt2, oracle):
    for text in ["a  b", "  ", "x \n\n y", " \u3000z", "ab'  s", "1 2  3   4\r\n\r\n5", "\n" * 50 + "q"]:
        for chunk in (1, 2, 3):
            got = list(gpt2.encode_iterable(io.StringIO(text * 3), chunk_chars=chunk))
            assert got == oracle.encode_ordinary(text * 3), (text, chunk)


def test_encode_batch_and_pickle(gpt2, oracle, texts):
    batch = [texts["german.txt"], "", "a" + EOT]
    assert gpt2.encode_batch(batch) == [oracle.encode(t, allowed_special="all") for t in batch]
    assert len(gpt2._cache) > 0
    blob = pickle.dumps(gpt2)
    clone = pickle.loads(blob)
    assert len(clone._cache) == 0
    assert b"PretokenCache" not in blob and b"_table" not in blob  # no cache or derived tables
    assert clone.encode(texts["address.txt"]) == oracle.encode_ordinary(texts["address.txt"])


class _EndlessText:
    """A file-like object that never ends; counts the characters handed out."""

    def __init__(self) -> None:
        self.chars_read = 0

    def read(self, n: int) -> str:
        block = ("Some words, then 42 more.\n" * (n // 26 + 1))[:n]
        self.chars_read += len(block)
        return block


def test_encode_iterable_is_lazy(gpt2, oracle):
    from itertools import islice

    source = _EndlessText()
    first = list(islice(gpt2.encode_iterable(source, chunk_chars=4096), 1000))
    assert first == oracle.encode_ordinary("Some words, then 42 more.\n" * 200)[:1000]
    assert source.chars_read <= 3 * 4096  # never reads ahead more than a few chunks
