"""Gopher's quality rules (Rae et al. 2021, section A.1.1) as datatrove 0.10.1's ``GopherQualityFilter`` applies
them, in its order: word count, mean word length, ``#`` and ellipsis per word, bullet and ellipsis lines, words
with a letter, stop words. The first failing rule drops the document; a falsy threshold switches its rule off.
Contract: docs/stages.md, Quality rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.filter.base import COUNT, BaseFilter, RuleThreshold
from pipeline.filter.options import FilterOptions, fraction, made, number, strings
from pipeline.filter.outcome import Rule, as_columns, decide, numeric, texts_of
from pipeline.filter.registry import register
from pipeline.stage_api.filter import FilterResult
from pipeline.text.chars import alpha_table, codepoints, table_of
from pipeline.text.english.words import split_words
from pipeline.text.punctuation import PUNCTUATION_SET

NAME = "gopher_quality"
STOP_WORDS = ("the", "be", "to", "of", "and", "that", "have", "with")
RULES = (
    "gopher_short_doc",
    "gopher_long_doc",
    "gopher_below_avg_threshold",
    "gopher_above_avg_threshold",
    "gopher_too_many_hashes",
    "gopher_too_many_ellipsis",
    "gopher_too_many_bullets",
    "gopher_too_many_end_ellipsis",
    "gopher_below_alpha_threshold",
    "gopher_enough_stop_words",
)
_BULLETS = ("•", "-")
_ELLIPSES = ("...", "…")


@cache
def _punctuation_table() -> np.ndarray:
    return table_of(PUNCTUATION_SET)


@dataclass(frozen=True)
class GopherQualityOptions(FilterOptions):
    """The options of :class:`GopherQualityFilter`: datatrove 0.10.1's ``GopherQualityFilter`` arguments (a null or
    0 threshold switches its rule off)."""

    min_doc_words: int | None = 50
    """Fewest words that are not only punctuation."""
    max_doc_words: int | None = 100000
    """Most words that are not only punctuation."""
    min_avg_word_length: int | None = 3
    """Smallest mean length of those words."""
    max_avg_word_length: int | None = 10
    """Largest mean length of those words."""
    max_symbol_word_ratio: float | None = 0.1
    """Most ``#`` (and, apart, ellipses) per word."""
    max_bullet_lines_ratio: float | None = 0.9
    """Largest fraction of lines starting with a bullet."""
    max_ellipsis_lines_ratio: float | None = 0.3
    """Largest fraction of lines ending in an ellipsis."""
    max_non_alpha_words_ratio: float | None = 0.8
    """Smallest fraction of words with a letter (datatrove's name)."""
    min_stop_words: int | None = 2
    """Fewest distinct stop words."""
    stop_words: list[str] | None = None
    """The stop words (None: Gopher's eight)."""

    def check(self) -> None:
        for option in ("min_doc_words", "max_doc_words", "min_avg_word_length", "max_avg_word_length"):
            number(self, option)
        number(self, "max_symbol_word_ratio")
        number(self, "min_stop_words")
        for option in ("max_bullet_lines_ratio", "max_ellipsis_lines_ratio", "max_non_alpha_words_ratio"):
            fraction(self, option)
        strings(self, "stop_words")


@register(NAME)
class GopherQualityFilter(BaseFilter):
    """Drops documents that do not look like prose by Gopher's word, symbol and line statistics."""

    name = NAME
    Options = GopherQualityOptions
    RULE_THRESHOLDS = {
        "gopher_short_doc": RuleThreshold("min", "min_doc_words", COUNT),
        "gopher_long_doc": RuleThreshold("max", "max_doc_words", COUNT),
        "gopher_below_avg_threshold": RuleThreshold("min", "min_avg_word_length", COUNT),
        "gopher_above_avg_threshold": RuleThreshold("max", "max_avg_word_length", COUNT),
        "gopher_too_many_hashes": RuleThreshold("max", "max_symbol_word_ratio"),
        "gopher_too_many_ellipsis": RuleThreshold("max", "max_symbol_word_ratio"),
        "gopher_too_many_bullets": RuleThreshold("max", "max_bullet_lines_ratio"),
        "gopher_too_many_end_ellipsis": RuleThreshold("max", "max_ellipsis_lines_ratio"),
        "gopher_below_alpha_threshold": RuleThreshold("min", "max_non_alpha_words_ratio"),
        "gopher_enough_stop_words": RuleThreshold("min", "min_stop_words", COUNT),
    }
    # the options that only decide (docs/stages.md, Re-deciding from the signals)
    DECIDES = (
        "min_doc_words",
        "max_doc_words",
        "min_avg_word_length",
        "max_avg_word_length",
        "max_symbol_word_ratio",
        "max_bullet_lines_ratio",
        "max_ellipsis_lines_ratio",
        "max_non_alpha_words_ratio",
        "min_stop_words",
    )

    def __init__(self, options: GopherQualityOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(GopherQualityOptions, options, kwargs, NAME)
        self.min_doc_words = o.min_doc_words
        self.max_doc_words = o.max_doc_words
        self.min_avg_word_length = o.min_avg_word_length
        self.max_avg_word_length = o.max_avg_word_length
        self.max_symbol_word_ratio = o.max_symbol_word_ratio
        self.max_bullet_lines_ratio = o.max_bullet_lines_ratio
        self.max_ellipsis_lines_ratio = o.max_ellipsis_lines_ratio
        self.max_non_alpha_words_ratio = o.max_non_alpha_words_ratio  # the minimum share of words with a letter
        self.min_stop_words = o.min_stop_words
        self.stop_words = frozenset(STOP_WORDS if o.stop_words is None else o.stop_words)

    def signal_types(self) -> dict[str, pa.DataType]:
        """The measures the rules decide on (docs/stages.md, Signals)."""
        return dict(SIGNALS)

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask, first failing rule and per-rule measures of every document of ``batch``."""
        signals = self.measure(batch)
        return replace(self.decide(signals, batch.num_rows), signals=signals)

    def measure(self, batch: pa.RecordBatch) -> dict[str, pa.Array]:
        """Every measure of every document of ``batch``, whatever the decision."""
        rows = [_measures(text, self.stop_words) for text in texts_of(batch)]
        values = {key: [row[j] for row in rows] for j, key in enumerate(SIGNALS)}
        return as_columns(values, SIGNALS)

    def decide(self, signals: Mapping[str, pa.Array], n: int) -> FilterResult:
        """The decision of the rules, in datatrove's order, from the measures alone."""
        return decide(NAME, self.rules(), numeric(signals), n).result()

    def threshold_options(self) -> dict[str, tuple[str, str]]:
        """Rule -> (its measure, its threshold option): the report's "what if" steps."""
        return {rule: (measure, option) for rule, measure, _, option, _ in _RULES}

    def rules(self) -> list[Rule]:
        """The rules in order, each on its measure (a falsy threshold: off)."""
        return [
            Rule(rule, measure, direction, getattr(self, option) or None, f"{what} {{value}} {sign} {option} {{limit}}")
            for rule, measure, direction, option, what in _RULES
            for sign in ("<" if direction == "min" else ">",)
        ]


SIGNALS: dict[str, pa.DataType] = {
    "word_count": pa.int64(),
    "avg_word_length": pa.float64(),
    "hash_word_ratio": pa.float64(),
    "ellipsis_word_ratio": pa.float64(),
    "bullet_lines_ratio": pa.float64(),
    "end_ellipsis_lines_ratio": pa.float64(),
    "alpha_words_ratio": pa.float64(),
    "stop_words": pa.int64(),
}
# (rule, measure, direction, option, what the detail calls the measure), in datatrove's order
_RULES = (
    ("gopher_short_doc", "word_count", "min", "min_doc_words", "non-symbol words"),
    ("gopher_long_doc", "word_count", "max", "max_doc_words", "non-symbol words"),
    ("gopher_below_avg_threshold", "avg_word_length", "min", "min_avg_word_length", "mean word length"),
    ("gopher_above_avg_threshold", "avg_word_length", "max", "max_avg_word_length", "mean word length"),
    ("gopher_too_many_hashes", "hash_word_ratio", "max", "max_symbol_word_ratio", "'#' per word"),
    ("gopher_too_many_ellipsis", "ellipsis_word_ratio", "max", "max_symbol_word_ratio", "ellipses per word"),
    ("gopher_too_many_bullets", "bullet_lines_ratio", "max", "max_bullet_lines_ratio", "bullet line fraction"),
    (
        "gopher_too_many_end_ellipsis",
        "end_ellipsis_lines_ratio",
        "max",
        "max_ellipsis_lines_ratio",
        "ellipsis line fraction",
    ),
    ("gopher_below_alpha_threshold", "alpha_words_ratio", "min", "max_non_alpha_words_ratio", "words with a letter"),
    ("gopher_enough_stop_words", "stop_words", "min", "min_stop_words", "distinct stop words"),
)


def _measures(text: str, stop_words: frozenset[str]) -> tuple[float, ...]:
    """The :data:`SIGNALS` of one text, in order."""
    words = split_words(text)
    n_words = len(words)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=n_words)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if n_words else lengths
    cp = codepoints("".join(words))
    # a word is a symbol when every character of it is punctuation
    has_other = np.logical_or.reduceat(~_punctuation_table()[cp], starts) if n_words else lengths.astype(bool)
    n_real = int(has_other.sum())
    mean = int(lengths[has_other].sum()) / n_real if n_real else float("nan")
    hashes = _ratio(text.count("#"), n_words)
    ellipses = _ratio(text.count("...") + text.count("…"), n_words)
    lines = text.splitlines()
    n_lines = len(lines)
    bullets = _ratio(sum(line.lstrip().startswith(_BULLETS) for line in lines), n_lines)
    ended = sum(line.rstrip().endswith(_ELLIPSES) for line in lines) if "..." in text or "…" in text else 0
    endings = _ratio(ended, n_lines)
    with_letter = (
        _ratio(int(np.logical_or.reduceat(alpha_table()[cp], starts).sum()), n_words) if n_words else float("nan")
    )
    return n_real, mean, hashes, ellipses, bullets, endings, with_letter, len(stop_words.intersection(words))


def _ratio(count: int, total: int) -> float:
    """``count / total``; with nothing to divide by (no words or lines, which datatrove cannot divide by either)
    NaN, which fails no rule."""
    return count / total if total else float("nan")
