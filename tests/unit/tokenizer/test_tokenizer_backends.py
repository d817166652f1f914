"""The numba and pure-Python encoding paths give identical ids (and tiktoken's) on fixtures and random text."""

from __future__ import annotations

import io
import random
import tracemalloc

import numpy as np
import pytest

from pipeline.tokenizer import BPETokenizer
from pipeline.tokenizer.encode import WordCache, numba_enabled, set_numba
from tests.oracles import not_applicable, require_oracle

require_oracle("numba")
tiktoken = require_oracle("tiktoken")
from test_tokenizer_encode import EOT, TEXTS, tiktoken_from_vocab  # noqa: E402


def _build(shared_fixtures, numba: bool, **kwargs) -> BPETokenizer:
    previous = set_numba(numba)
    try:
        if numba and not numba_enabled():
            not_applicable("numba disabled (PIPELINE_TOKENIZER_NUMBA=0)")
        return BPETokenizer.from_files(
            shared_fixtures / "gpt2_vocab.json", shared_fixtures / "gpt2_merges.txt", [EOT], **kwargs
        )
    finally:
        set_numba(previous)


@pytest.fixture(scope="module")
def fast(shared_fixtures) -> BPETokenizer:
    tok = _build(shared_fixtures, True)
    assert tok._numba is not None
    return tok


@pytest.fixture(scope="module")
def slow(shared_fixtures) -> BPETokenizer:
    tok = _build(shared_fixtures, False)
    assert tok._numba is None
    return tok


@pytest.fixture(scope="module")
def oracle(shared_fixtures):
    return tiktoken_from_vocab(shared_fixtures / "gpt2_vocab.json", {EOT: 50256})


ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 '\".,;:!?-_()[]{}<>/\\@#$%^&*+=~`|"
    "        \n\n\t\r\u00a0\u3000\u2028"
    "äöüßéèêñçøåÆŒ"
    "αβγδΩЖжщЯ"
    "中文字漢語日本語ひらがなカタカナ한국어"
    "🙂👍🏽🚀🇩🇪"
    "\u0301\u0308\u200d\ufe0f"
    "١٢٣४५६"
    "\x00\x01\x7f\x85"
)


def random_texts(seed: int, n: int) -> list[str]:
    """Random Unicode (mixed scripts, whitespace runs, contractions, long runs) and bytes read as text."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            out.append("".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 400))))
        elif kind == 1:
            words = [
                "'s",
                "'ll",
                "'VE",
                " the",
                "don't",
                "x" * rng.randrange(60, 300),
                "  ",
                "\n \n",
                "42",
                "🙂" * rng.randrange(1, 40),
                "ab" * rng.randrange(1, 80),
                "Straße",
                "\t\t",
            ]
            out.append("".join(rng.choice(words) for _ in range(rng.randrange(1, 60))))
        elif kind == 2:
            raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 600)))
            out.append(raw.decode("latin-1"))
        else:
            raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 600)))
            out.append(raw.decode("utf-8", errors="replace"))
    return out


@pytest.mark.parametrize("name", TEXTS)
def test_fixture_ids_identical(fast, slow, oracle, shared_fixtures, name):
    text = (shared_fixtures / name).read_text(encoding="utf-8")
    ids = fast.encode(text)
    assert ids == slow.encode(text) == oracle.encode(text, allowed_special={EOT})
    plain = fast.encode(text, split_special=False)
    assert plain == slow.encode(text, split_special=False) == oracle.encode_ordinary(text)


def test_random_text_identical(fast, slow, oracle):
    for text in random_texts(7, 400):
        expected = oracle.encode_ordinary(text)
        assert fast.encode(text, split_special=False) == expected, repr(text)
        assert slow.encode(text, split_special=False) == expected, repr(text)


@pytest.mark.parametrize("entries", [0, 1, 3, 64])
def test_tiny_caches_identical(shared_fixtures, oracle, entries):
    """A cache cleared every few words, or none, must not change any id (collisions are compared)."""
    tok = _build(shared_fixtures, True, cache_size=entries)
    texts = random_texts(11, 120) + [(shared_fixtures / "german.txt").read_text(encoding="utf-8")]
    for _ in range(2):  # second pass: hits in the cache when it is large enough
        for text in texts:
            assert tok.encode(text, split_special=False) == oracle.encode_ordinary(text)
    assert len(tok._cache) <= entries


def test_word_cache_is_bounded():
    cache = WordCache(4096)
    assert cache.nbytes < 1 << 20
    assert WordCache(0).nbytes < 100 and len(WordCache(0)) == 0


@pytest.mark.parametrize("backend", ["fast", "slow"])
def test_encode_ordinary_batch(backend, request, oracle):
    tok = request.getfixturevalue(backend)
    texts = ["", "Hello world", "", f"a{EOT}b", *random_texts(3, 40), ""]
    ids, ends = tok.encode_ordinary_batch(texts)
    assert ids.dtype == np.int32 and ends.shape == (len(texts),)
    starts = np.concatenate([[0], ends[:-1]])
    assert [ids[s:e].tolist() for s, e in zip(starts, ends, strict=True)] == [oracle.encode_ordinary(t) for t in texts]
    empty_ids, empty_ends = tok.encode_ordinary_batch([])
    assert empty_ids.size == 0 and empty_ends.size == 0


@pytest.mark.parametrize("backend", ["fast", "slow"])
def test_encode_iterable_memory(backend, request, shared_fixtures):
    """Peak traced memory of encode_iterable over ~1 MB of text stays under 1 MB, cache included."""
    tok = request.getfixturevalue(backend)
    text = "\n".join((shared_fixtures / n).read_text(encoding="utf-8") for n in TEXTS) + "".join(random_texts(5, 200))
    text = text * max(1, 1_000_000 // len(text))
    stream = io.StringIO(text)  # its buffer is not the encoder's memory
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    count = sum(1 for _ in tok.encode_iterable(stream))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == len(tok.encode(text))
    assert peak - base < 1_000_000


def test_char_classes_equal_regex_per_code_point() -> None:
    """The class table equals ``regex`` asked about each code point alone (0 other, 1 letter, 2 number, 3 space)."""
    import regex

    from pipeline.tokenizer.encode import char_classes

    letter, number, space = (regex.compile(p).fullmatch for p in (r"\p{L}", r"\p{N}", r"\s"))
    expected = np.array(
        [1 if letter(c) else 2 if number(c) else 3 if space(c) else 0 for c in map(chr, range(0x110000))],
        dtype=np.uint8,
    )
    classes = char_classes()
    assert classes.dtype == np.uint8 and classes.shape == (0x110000,)
    assert np.array_equal(classes, expected)
    assert (expected == 1).sum() > 100_000 and (expected == 3).sum() > 20  # the oracle sees all three classes


def test_numba_pretokens_equal_regex(shared_fixtures):
    """The numba scanner cuts exactly where ``regex.findall`` with GPT-2's pattern does."""
    from pipeline.tokenizer.encode import char_classes
    from pipeline.tokenizer.pretokenize import pretokens
    from pipeline.tokenizer.pretokenize_numba import pretoken_end

    classes = char_classes()
    texts = random_texts(13, 200) + [
        (shared_fixtures / "address.txt").read_text(encoding="utf-8")[:5000],
        "'s'S'll'LL 're're've'd't'm'x ' '' ''s",
        " \u00a0 x\n \n\n\u3000\u3000y  ",
    ]
    for text in texts:
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        cuts, p = [], 0
        while p < data.size:
            q = pretoken_end(data, p, data.size, classes)
            assert q > p
            cuts.append(bytes(data[p:q]).decode("utf-8"))
            p = q
        assert cuts == pretokens(text), repr(text)


def test_unpickle_shares_tables_of_equal_tokenizer_only(fast, oracle):
    import pickle

    from pipeline.tokenizer import BPETokenizer

    blob = pickle.dumps(fast)
    first, second = pickle.loads(blob), pickle.loads(blob)
    assert second._numba is first._numba and second._cache is not first._cache and len(second._cache) == 0
    assert second.vocab is first.vocab and second.merges is first.merges  # the blob is not decoded again
    text = "Pickled twice, encoded the same: ümlaut 123 'll"
    assert first.encode(text) == second.encode(text) == oracle.encode_ordinary(text)
    other = BPETokenizer(fast.vocab, fast.merges[:-1], fast.special_ids)  # one merge fewer: a different tokenizer
    clone = pickle.loads(pickle.dumps(other))
    assert clone._table is not first._table and len(clone._table) == len(first._table) - 1
    assert clone.merges == fast.merges[:-1] and clone.vocab == fast.vocab and clone.special_ids == fast.special_ids
    word = fast.vocab[50255]  # the token made by the dropped merge
    assert clone.encode(word.decode()) != first.encode(word.decode())
