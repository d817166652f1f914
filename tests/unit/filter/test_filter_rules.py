"""The Gopher repetition, Gopher quality, C4 and FineWeb filters against datatrove 0.10.1's own filters (the
oracle) on real documents (tests/filter_corpus.py) and hand-made edge cases, with default and changed thresholds:
the same keep/drop and first failing rule for every document, and for C4 the same rewritten text.

Word and sentence splits are memoised on both sides (datatrove's through its own ``split_into_parts``), which
changes no result and keeps the test short."""

from __future__ import annotations

import dataclasses
import inspect
import math
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from pipeline.config import ConfigError
from pipeline.filter.rules import c4, fineweb, gopher_quality, gopher_repetition
from pipeline.filter.rules.c4 import C4Filter
from pipeline.filter.rules.fineweb import FineWebFilter
from pipeline.filter.rules.gopher_quality import GopherQualityFilter
from pipeline.filter.rules.gopher_repetition import GopherRepetitionFilter
from pipeline.stage_api.filter import apply_filters
from pipeline.text.english import words
from pipeline.text.punctuation import PUNCTUATION, PUNCTUATION_SET, TERMINAL_PUNCTUATION
from tests.filter_corpus import edge_cases, real_documents
from tests.oracles import require_oracle

dt_filters = require_oracle("datatrove.pipeline.filters")
dt_c4 = require_oracle("datatrove.pipeline.filters.c4_filters")
dt_text = require_oracle("datatrove.utils.text")
dt_data = require_oracle("datatrove.data")
require_oracle("spacy")

OURS = {
    "gopher_repetition": (GopherRepetitionFilter, dt_filters.GopherRepetitionFilter),
    "gopher_quality": (GopherQualityFilter, dt_filters.GopherQualityFilter),
    "c4": (C4Filter, dt_filters.C4QualityFilter),
    "fineweb": (FineWebFilter, dt_filters.FineWebQualityFilter),
}
CASES: list[tuple[str, dict[str, Any]]] = [
    ("gopher_repetition", {}),
    (
        "gopher_repetition",
        {
            "dup_line_frac": 0.1,
            "dup_para_frac": None,
            "dup_line_char_frac": 0.05,
            "dup_para_char_frac": 0.08,
            "top_n_grams": ((2, 0.1), (3, 0.08), (5, 0.04)),
            "dup_n_grams": ((4, 0.1), (5, 0.05), (7, 0.03)),
        },
    ),
    ("gopher_quality", {}),
    (
        "gopher_quality",
        {
            "min_doc_words": 10,
            "max_doc_words": 1500,
            "min_avg_word_length": 4,
            "max_avg_word_length": 6,
            "max_symbol_word_ratio": 0.02,
            "max_bullet_lines_ratio": 0.2,
            "max_ellipsis_lines_ratio": 0.05,
            "max_non_alpha_words_ratio": 0.9,
            "min_stop_words": 4,
            "stop_words": ["the", "a", "is", "of", "in", "und", "der"],
        },
    ),
    (
        "gopher_quality",
        {"min_doc_words": 3, "min_avg_word_length": None, "max_avg_word_length": None, "max_symbol_word_ratio": 0},
    ),
    ("c4", {}),
    (
        "c4",
        {
            "split_paragraph": False,
            "remove_citations": False,
            "min_num_sentences": 2,
            "min_words_per_line": 5,
            "max_word_length": 30,
        },
    ),
    (
        "c4",
        {
            "filter_no_terminal_punct": False,
            "min_num_sentences": -1,
            "min_words_per_line": -1,
            "max_word_length": -1,
            "filter_javascript": False,
            "filter_policy": False,
            "filter_curly_bracket": False,
        },
    ),
    ("fineweb", {}),
    (
        "fineweb",
        {
            "line_punct_thr": 0.5,
            "line_punct_exclude_zero": True,
            "stop_chars": (".", "!", "?", "…", "。"),
            "short_line_thr": 0.3,
            "short_line_length": 50,
            "char_duplicates_ratio": 0.05,
            "new_line_ratio": 0.1,
        },
    ),
]


@pytest.fixture(scope="module", autouse=True)
def memoised_splits() -> Iterator[None]:
    """Split each text once per side: ours through the filter modules' names, datatrove's through its cache."""
    with pytest.MonkeyPatch.context() as patch:
        cached_words = lru_cache(maxsize=None)(words.split_words)
        cached_sentences = lru_cache(maxsize=None)(words.split_sentences)
        cached_sentence_counts = lru_cache(maxsize=None)(words.count_sentences)
        for module in (gopher_repetition, gopher_quality):
            patch.setattr(module, "split_words", lambda text: list(cached_words(text)))
        patch.setattr(fineweb, "count_words", lambda text: len(cached_words(text)))
        patch.setattr(c4, "split_sentences", lambda text: list(cached_sentences(text)))
        patch.setattr(c4, "count_sentences", cached_sentence_counts)
        patch.setattr(dt_text, "split_into_parts", lru_cache(maxsize=None)(dt_text.split_into_parts.__wrapped__))
        yield


@pytest.fixture(scope="module")
def documents(shared_fixtures) -> list[tuple[str, str]]:
    docs = real_documents(shared_fixtures, per_kind=60_000) + edge_cases()
    origins = [origin for origin, _ in docs]
    assert any(o.endswith(".py") for o in origins) and any(o.endswith(".html") for o in origins)
    assert any(o.endswith("/copyright") for o in origins) and len(docs) > 100
    return docs


def _batch(texts: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"doc_id": list(range(len(texts))), "source": ["s"] * len(texts), "text": texts})


def _oracle(steps: list[Any], name: str, texts: list[str]) -> list[tuple[str | None, str]]:
    """datatrove's verdict per text: the reason (None when kept) and the text after the steps."""
    verdicts = []
    for i, text in enumerate(texts):
        doc = dt_data.Document(text=text, id=str(i))
        reason = None
        for step in steps:
            result = step.filter(doc)
            if isinstance(result, tuple):
                reason = f"{name}.{result[1]}"
                break
            assert result is True
        verdicts.append((reason, doc.text))
    return verdicts


def _compare(ours: Any, oracle_steps: list[Any], texts: list[str]) -> tuple[int, list[str]]:
    """Documents agreeing with datatrove, and a description of each that does not."""
    result = ours.apply(_batch(texts))
    expected = _oracle(oracle_steps, ours.name, texts)
    rewritten = texts if result.text is None else result.text.to_pylist()
    wrong = []
    for i, (reason, text) in enumerate(expected):
        got = result.reason[i]
        if got != reason or bool(result.keep[i]) != (reason is None) or (reason is None and rewritten[i] != text):
            wrong.append(f"doc {i}: datatrove {reason}, ours {got} ({result.detail[i]}): {texts[i][:60]!r}")
    if result.text is not None:
        changed = sum(r is None and t != texts[i] for i, (r, t) in enumerate(expected))
        assert result.changed == changed
    return len(texts) - len(wrong), wrong


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_same_decisions_as_datatrove(name: str, kwargs: dict[str, Any], documents, capsys) -> None:
    ours_cls, theirs_cls = OURS[name]
    texts = [text for _, text in documents]
    agree, wrong = _compare(ours_cls(**kwargs), [theirs_cls(**kwargs)], texts)
    with capsys.disabled():
        print(f"\n{name} {kwargs or 'defaults'}: {agree}/{len(texts)} documents agree with datatrove 0.10.1")
    assert wrong == []


def test_the_documents_reach_every_rule(documents) -> None:
    """The conformance cases mean something only if the documents fail each rule somewhere."""
    texts = [text for _, text in documents]
    seen = {reason for name, kwargs in CASES for reason in OURS[name][0](**kwargs).apply(_batch(texts)).reason}
    for name, rules in [
        ("gopher_quality", gopher_quality.RULES),
        ("c4", c4.RULES[:3]),
        ("fineweb", fineweb.RULES),
        ("gopher_repetition", ("empty", "dup_para_frac", "dup_para_char_frac", "dup_line_frac", "dup_line_char_frac")),
        ("gopher_repetition", ("top_2_gram", "top_3_gram", "top_4_gram", "duplicated_5_n_grams")),
    ]:
        assert {f"{name}.{rule}" for rule in rules} <= seen


def test_c4_bad_words_as_datatrove_with_the_same_list(documents, tmp_path, monkeypatch) -> None:
    listing = tmp_path / "bad_words.txt"
    listing.write_text("python\ncopyright holder\nthe door\nsun\nkatze\n", encoding="utf-8")
    monkeypatch.setattr(dt_c4, "cached_asset_path_or_download", lambda *args, **kwargs: str(listing))
    texts = [text for _, text in documents]
    steps = [dt_filters.C4QualityFilter(), dt_c4.C4BadWordsFilter(default_language="en")]
    agree, wrong = _compare(C4Filter(bad_words_file=str(listing)), steps, texts)
    assert wrong == []
    dropped = C4Filter(bad_words_file=str(listing)).apply(_batch(texts)).reason
    assert sum(r == "c4.document_removed_with_badwords" for r in dropped) > 3  # the list mattered


def test_arguments_are_datatrove_s_with_its_defaults() -> None:
    for name, (ours_cls, theirs_cls) in OURS.items():
        theirs = {
            p.name: p.default
            for p in inspect.signature(theirs_cls).parameters.values()
            if p.name not in ("exclusion_writer", "language")
        }
        ours = {f.name: f.default for f in dataclasses.fields(ours_cls.Options)}  # the options the config takes
        extra = {"bad_words_file": None} if name == "c4" else {}
        extra["annotate"] = False  # every filter's own: measure, drop nothing (docs/stages.md, Signals)
        assert ours == theirs | extra, name
        with pytest.raises(TypeError):
            ours_cls(1)


def test_character_sets_are_datatrove_s_and_unicode_s() -> None:
    regex = require_oracle("regex")
    assert TERMINAL_PUNCTUATION == dt_text.TERMINAL_PUNCTUATION
    assert PUNCTUATION_SET == dt_text.PUNCTUATION_SET and set(PUNCTUATION) == set(dt_text.PUNCTUATION)
    khmer = {"\u17d6", "\u17d9", "\u17da"}
    sentence_terminal = {c for c in TERMINAL_PUNCTUATION - khmer if regex.match(r"\p{Sentence_Terminal}", c)}
    assert sentence_terminal == TERMINAL_PUNCTUATION - khmer
    assert {unicodedata.name(c).split()[0] + " " + unicodedata.category(c) for c in khmer} == {"KHMER Po"}


def test_detail_and_measures_name_the_value_and_threshold() -> None:
    twelve = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu ... !!"
    prose = " ".join(["the cat and the dog sat with us"] * 10)  # 90 words, two stop words and more
    result = GopherQualityFilter().apply(_batch([twelve, prose]))
    assert list(result.keep) == [False, True]
    assert result.reason[0] == "gopher_quality.gopher_short_doc"
    assert result.detail[0] == "non-symbol words 12 < min_doc_words 50"
    measures = result.measures
    assert measures["gopher_quality.gopher_short_doc"][0] == 12
    assert math.isnan(measures["gopher_quality.gopher_long_doc"][0])
    assert measures["gopher_quality.gopher_short_doc"][1] == 80
    lengths = [len(w) for w in prose.split()]
    assert measures["gopher_quality.gopher_below_avg_threshold"][1] == pytest.approx(sum(lengths) / len(lengths))
    assert measures["gopher_quality.gopher_enough_stop_words"][1] == 3  # the, and, with
    assert all(m.dtype == np.float64 and len(m) == 2 for m in measures.values())

    lines = ["Short one.", "Another short line.", "A third.", "This line is a bit longer than thirty characters."]
    result = FineWebFilter().apply(_batch(["\n".join(lines)]))
    assert result.reason[0] == "fineweb.short_line_ratio"
    assert result.detail[0] == "lines of at most 30 characters 0.75 > short_line_thr 0.67"
    assert result.measures["fineweb.short_line_ratio"][0] == 3 / 4
    assert result.measures["fineweb.line_punct_ratio"][0] == 1.0
    assert math.isnan(result.measures["fineweb.list_ratio"][0])


def test_c4_rewrites_text_through_apply_filters() -> None:
    body = "\n".join(f"Line {i} says the thing that we want to keep here." for i in range(6))
    text = body + "\nmenu\nPlease enable javascript to see it.\nCited here [1] and there [edit]."
    filtered = apply_filters(_batch([text, "too short."]), [C4Filter(), FineWebFilter()])
    assert filtered.kept.column("text").to_pylist() == [body + "\nCited here  and there ."]
    assert filtered.changed == {"c4": 1, "fineweb": 0}
    assert filtered.dropped.column("reason").to_pylist() == ["c4.too_few_sentences"]


@pytest.mark.parametrize(
    ("make", "key"),
    [
        (lambda: GopherQualityFilter(min_doc_words="many"), "filter.gopher_quality.min_doc_words"),
        (lambda: GopherQualityFilter(stop_words="the"), "filter.gopher_quality.stop_words"),
        (lambda: GopherRepetitionFilter(top_n_grams=[(0, 0.1)]), "filter.gopher_repetition.top_n_grams"),
        (lambda: GopherRepetitionFilter(dup_line_frac=-0.1), "filter.gopher_repetition.dup_line_frac"),
        (lambda: C4Filter(min_num_sentences=-2), "filter.c4.min_num_sentences"),
        (lambda: C4Filter(filter_policy="yes"), "filter.c4.filter_policy"),
        (lambda: C4Filter(bad_words_file="/nonexistent/bad_words.txt"), "filter.c4.bad_words_file"),
        (lambda: FineWebFilter(stop_chars="abc"), "filter.fineweb.stop_chars"),
        (lambda: FineWebFilter(short_line_length=None), "filter.fineweb.short_line_length"),
    ],
)
def test_bad_arguments_name_the_key(make: Callable[[], object], key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        make()
    message = str(raised.value)
    assert key in message and "\n" not in message


def _word_lists() -> Iterator[list[str]]:
    """Word lists full of repeats, ties, one character sequence split into words in different ways, and words
    holding spaces."""
    rng = np.random.default_rng(7)
    for size in (1, 2, 5, 11, 40, 300):
        for alphabet in (["a", "b"], ["ab", "a", "b", "c", "bc"], ["x y", "x", "y", "x y z"], ["the", "cat", "sat"]):
            for _ in range(6):
                yield [alphabet[k] for k in rng.integers(0, len(alphabet), size)]
    yield ["ab", "c", "d", "e", "f", "a", "bc", "d", "e", "f"]
    yield ["one two", "three", "one", "two three"] * 3


@pytest.mark.parametrize("hashing", ["polynomial", "length only", "constant"])
def test_ngram_kernels_equal_datatrove_s_helpers(hashing: str, monkeypatch) -> None:
    """Exact whatever the hash: with keys that collide (by length only, or all equal) the string checks decide."""
    dt_rep = require_oracle("datatrove.pipeline.filters.gopher_repetition_filter")
    from pipeline.text import repetition
    from pipeline.text.repetition import WordGrams, duplicates

    if hashing != "polynomial":
        weak = (lambda self, s, e: (e - s).astype(np.uint64)) if hashing == "length only" else None
        weak = weak or (lambda self, s, e: np.zeros(len(s), dtype=np.uint64))
        monkeypatch.setattr(repetition._Polynomial, "runs", weak)

    checked = 0
    for word_list in _word_lists():
        grams = WordGrams(word_list)
        for n in range(1, 11):
            spaced = dt_rep.get_n_grams(word_list, n)
            expected = dt_rep.find_top_duplicate(spaced) if spaced else None
            assert grams.top_chars(n) == expected, (word_list, n)
            assert grams.duplicated_chars(n) == dt_rep.find_all_duplicate(word_list, n), (word_list, n)
            checked += 1
        assert duplicates(word_list) == dt_rep.find_duplicates(word_list)
    assert checked > 900
