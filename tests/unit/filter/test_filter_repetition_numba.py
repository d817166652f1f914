"""The compiled Gopher repetition n-gram kernels (pipeline/text/repetition_numba.py) and the fallback they stand
beside, against datatrove 0.10.1's own helpers (``get_n_grams``, ``find_top_duplicate``, ``find_all_duplicate``)
on the words of real text (datatrove's own split), non-ASCII text and edge cases, and the whole filter on both
backends against datatrove's ``GopherRepetitionFilter``."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest

from pipeline.filter.rules import gopher_repetition
from pipeline.filter.rules.gopher_repetition import GopherRepetitionFilter
from pipeline.numba_backend import FILTER
from pipeline.text.repetition import CompiledWordGrams, WordGrams, compiled, word_grams
from tests.backends import numba_backend
from tests.filter_corpus import edge_cases, real_documents
from tests.oracles import require_oracle

dt_rep = require_oracle("datatrove.pipeline.filters.gopher_repetition_filter")
dt_text = require_oracle("datatrove.utils.text")
dt_data = require_oracle("datatrove.data")
require_oracle("spacy")

EDGE_WORD_LISTS = [
    [],
    ["one"],
    ["a", "a"],
    ["the"] * 40,
    ["same", "line", "again"] * 12,
    ["ab", "c", "d", "e", "f", "g", "a", "bc", "d", "e", "f", "g"] * 2,  # one concatenation, two splits
    ["", "x", "", "x", "", "x"],
    ["Straße", "über", "Größe", "日本語", "の", "テキスト", "🙂", "𝔘𝔫𝔦", "🙂", "𝔘𝔫𝔦"] * 3,  # beyond the BMP too
    ["\udc80", "a", "\udc80", "a", "\udc80", "a"],  # a lone surrogate is one code point, as in len()
]


@pytest.fixture(scope="module")
def texts(shared_fixtures) -> list[str]:
    """Real documents (English and German fixtures, Python sources, Debian docs) and the filter's edge cases."""
    return [text for _, text in real_documents(shared_fixtures, per_kind=20_000) + edge_cases()]


@pytest.fixture(scope="module")
def word_lists(texts: list[str]) -> list[list[str]]:
    """datatrove's words of ``texts``, then the hand-made lists above."""
    lists = [dt_text.split_into_words(text, "en") for text in texts]
    assert any(any(not w.isascii() for w in words) for words in lists)  # real non-ASCII text is among them
    return lists + EDGE_WORD_LISTS


def _expected(words: list[str], n: int) -> tuple[int | None, int]:
    spaced = dt_rep.get_n_grams(words, n)
    return (dt_rep.find_top_duplicate(spaced) if spaced else None), dt_rep.find_all_duplicate(words, n)


@pytest.mark.parametrize("numba", [True, False], ids=["numba", "fallback"])
def test_counts_equal_datatrove_s_helpers(numba: bool, word_lists: list[list[str]]) -> None:
    with numba_backend(FILTER, numba):
        kernels = 0
        for words in word_lists:
            grams = word_grams(words, compiled(sum(map(len, words))))
            kernels += isinstance(grams, CompiledWordGrams)
            for n in range(1, 11):
                assert (grams.top_chars(n), grams.duplicated_chars(n)) == _expected(words, n), (words[:8], n)
    # every list but the empty one goes through the kernels when they are on (none holds a space or a newline)
    assert kernels == (len(word_lists) - sum(not w for w in word_lists) if numba else 0)


def test_exact_when_every_key_collides(word_lists: list[list[str]]) -> None:
    """With prefix hashes of zeros every n-gram gets the same key: the code point comparisons alone decide."""
    require_oracle("numba")
    from pipeline.text import repetition_numba as kernel

    checked = 0
    for words in [w for w in word_lists[::7] if w] + EDGE_WORD_LISTS[1:]:
        joined = np.frombuffer("\n".join(words).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        usable, starts, ids, _, _, slots, keys, counts, reps = kernel.prepare(joined, len(words))
        assert usable
        powers = kernel.powers(len(joined) + 1)
        for n in (1, 2, 3, 5, 8):
            top = kernel.top_chars(
                starts, ids, np.zeros(len(words) + 1, np.uint64), powers, n, slots, keys, counts, reps
            )
            zeros = np.zeros(len(joined) + 1, np.uint64)
            duplicated = kernel.duplicated_chars(joined, starts, ids, zeros, powers, n, slots, keys)
            assert (None if top < 0 else top, duplicated) == _expected(words, n), (words[:8], n)
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    "words",
    [["x y", "x", "y", "x y"] * 3, ["a\nb", "a", "b", "a\nb", "a b"] * 2, ["one two", "three", "one", "two three"] * 3],
)
def test_words_with_a_space_or_newline_fall_back(words: list[str]) -> None:
    """Such words (never from the splitter, which cuts at whitespace) make different splits join equal: the
    fallback counts them."""
    with numba_backend(FILTER, True):
        grams = word_grams(words, compiled(100))
    assert isinstance(grams, WordGrams)
    for n in range(1, 7):
        assert (grams.top_chars(n), grams.duplicated_chars(n)) == _expected(words, n)


@pytest.fixture(scope="module")
def verdicts(texts: list[str]) -> list[str | None]:
    """datatrove's GopherRepetitionFilter on ``texts``: the failing rule as our reason, None when kept."""
    theirs = dt_rep.GopherRepetitionFilter()
    out = []
    for i, text in enumerate(texts):
        verdict = theirs.filter(dt_data.Document(text=text, id=str(i)))
        out.append(None if verdict is True else f"gopher_repetition.{verdict[1]}")
    return out


@pytest.mark.parametrize("numba", [True, False], ids=["numba", "fallback"])
def test_filter_decisions_equal_datatrove_s(numba: bool, texts: list[str], verdicts: list[str | None]) -> None:
    expected = verdicts
    batch = pa.RecordBatch.from_pydict({"doc_id": list(range(len(texts))), "source": ["s"] * len(texts), "text": texts})
    with numba_backend(FILTER, numba):
        result = GopherRepetitionFilter().apply(batch)
    assert result.reason == expected
    assert sum(r is not None and "gram" in r for r in expected) >= 3  # the n-gram rules decided some documents


@pytest.mark.parametrize(
    "text",
    ["a\n\nb", "a\n\n\nb\n\nc", "\n\na\n\n", "a\nb\n\n\n\nc", "", "\n\n\n", "one paragraph\nwith lines", "x\n\n\n\n\n"],
)
def test_paragraphs_are_re_split_s(text: str) -> None:
    assert gopher_repetition._paragraphs(text) == re.split(r"\n{2,}", text)


def test_strip_s_whitespace_is_python_s() -> None:
    require_oracle("numba")
    from pipeline.text import repetition_numba as kernel

    size = 0x110000
    assert np.array_equal(kernel.space_table(size), np.array([chr(c).isspace() for c in range(size)]))


def _newline_texts(texts: list[str]) -> list[str]:
    """Real documents, and random strings of newlines, spaces (Unicode's too), letters and astral characters."""
    rng = np.random.default_rng(3)
    alphabet = ["a", "b", "\n", "\n", "\n", " ", "\u3000", "\x85", "é", "🙂", "\r", "\udc80"]
    made = ["".join(rng.choice(alphabet, size=rng.integers(1, 30))) for _ in range(3000)]
    return [text for text in texts if text] + made + ["x", "\n", "\n\n", " \n\n \n\n ", "a\n\n\na\n\n\na"]


def test_paragraph_and_line_duplicates_equal_datatrove_s(texts: list[str]) -> None:
    require_oracle("numba")
    from pipeline.text import repetition_numba as kernel
    from pipeline.text.chars import codepoints

    for text in _newline_texts(texts):
        paragraphs, lines = re.split(r"\n{2,}", text.strip()), re.split(r"\n+", text)  # datatrove's splits
        expected = (len(paragraphs), *dt_rep.find_duplicates(paragraphs), len(lines), *dt_rep.find_duplicates(lines))
        assert kernel.paragraph_and_line_duplicates(codepoints(text)) == expected, text[:60]


def test_a_document_beyond_the_kept_powers(word_lists: list[list[str]], monkeypatch) -> None:
    """A document longer than the power table kept per process gets its own table, and the same counts."""
    from pipeline.text import repetition

    monkeypatch.setattr(repetition, "_KEEP_POWERS", 64)
    monkeypatch.setattr(repetition, "_compiled_power_table", [])
    words = max(word_lists, key=len)
    assert sum(map(len, words)) > 64
    with numba_backend(FILTER, True):
        grams = word_grams(words, compiled(10**9))
    assert isinstance(grams, CompiledWordGrams) and repetition._compiled_power_table == []
    for n in (2, 3, 5, 10):
        assert (grams.top_chars(n), grams.duplicated_chars(n)) == _expected(words, n)
