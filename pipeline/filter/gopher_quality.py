"""Gopher's quality rules (Rae et al. 2021, section A.1.1) as datatrove 0.10.1's ``GopherQualityFilter`` applies
them, in its order: word count, mean word length, ``#`` and ellipsis per word, bullet and ellipsis lines, words
with a letter, stop words. The first failing rule drops the document; a falsy threshold switches its rule off.
Contract: docs/stages.md, Quality rules."""

from __future__ import annotations

from functools import cache

import numpy as np
import pyarrow as pa

from pipeline.filter import settings
from pipeline.filter.chars import alpha_table, codepoints, table_of
from pipeline.filter.outcome import Outcomes, fmt, judge_each
from pipeline.filter.punctuation import PUNCTUATION_SET
from pipeline.filter.words import split_words
from pipeline.stage_api.filter import FilterResult

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


class GopherQualityFilter:
    """Drops documents that do not look like prose by Gopher's word, symbol and line statistics."""

    name = NAME

    def __init__(
        self,
        *,
        min_doc_words: int | None = 50,
        max_doc_words: int | None = 100000,
        min_avg_word_length: int | None = 3,
        max_avg_word_length: int | None = 10,
        max_symbol_word_ratio: float | None = 0.1,
        max_bullet_lines_ratio: float | None = 0.9,
        max_ellipsis_lines_ratio: float | None = 0.3,
        max_non_alpha_words_ratio: float | None = 0.8,
        min_stop_words: int | None = 2,
        stop_words: list[str] | None = None,
    ) -> None:
        self.min_doc_words = min_doc_words
        self.max_doc_words = max_doc_words
        self.min_avg_word_length = min_avg_word_length
        self.max_avg_word_length = max_avg_word_length
        self.max_symbol_word_ratio = max_symbol_word_ratio
        self.max_bullet_lines_ratio = max_bullet_lines_ratio
        self.max_ellipsis_lines_ratio = max_ellipsis_lines_ratio
        self.max_non_alpha_words_ratio = max_non_alpha_words_ratio  # the minimum share of words with a letter
        self.min_stop_words = min_stop_words
        for arg in (
            "min_doc_words max_doc_words min_avg_word_length max_avg_word_length max_symbol_word_ratio "
            "max_bullet_lines_ratio max_ellipsis_lines_ratio max_non_alpha_words_ratio min_stop_words"
        ).split():
            settings.number(NAME, arg, getattr(self, arg))
        given = settings.strings(NAME, "stop_words", stop_words)
        self.stop_words = frozenset(STOP_WORDS if given is None else given)

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask, first failing rule and per-rule measures of every document of ``batch``."""
        return judge_each(NAME, RULES, batch, self._judge)

    def _judge(self, out: Outcomes, i: int, text: str) -> None:
        words = split_words(text)
        n_words = len(words)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=n_words)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if n_words else lengths
        cp = codepoints("".join(words))
        # a word is a symbol when every character of it is punctuation
        has_other = np.logical_or.reduceat(~_punctuation_table()[cp], starts) if n_words else lengths.astype(bool)
        n_real = int(has_other.sum())

        def low(rule: str, what: str, value: float, limit: float | None) -> bool:
            if not limit:
                return False
            out.measure(i, rule, value)
            if value < limit:
                out.drop(i, rule, f"{what} {fmt(value)} < {_arg(rule)} {fmt(limit)}")
                return True
            return False

        def high(rule: str, what: str, value: float, limit: float | None) -> bool:
            if not limit:
                return False
            out.measure(i, rule, value)
            if value > limit:
                out.drop(i, rule, f"{what} {fmt(value)} > {_arg(rule)} {fmt(limit)}")
                return True
            return False

        if low("gopher_short_doc", "non-symbol words", n_real, self.min_doc_words):
            return
        if high("gopher_long_doc", "non-symbol words", n_real, self.max_doc_words):
            return
        mean = int(lengths[has_other].sum()) / n_real if n_real else float("nan")
        if low("gopher_below_avg_threshold", "mean word length", mean, self.min_avg_word_length):
            return
        if high("gopher_above_avg_threshold", "mean word length", mean, self.max_avg_word_length):
            return
        per_word = _ratio(text.count("#"), n_words)
        if high("gopher_too_many_hashes", "'#' per word", per_word, self.max_symbol_word_ratio):
            return
        per_word = _ratio(text.count("...") + text.count("…"), n_words)
        if high("gopher_too_many_ellipsis", "ellipses per word", per_word, self.max_symbol_word_ratio):
            return
        lines = text.splitlines()
        n_lines = len(lines)
        bullets = _ratio(sum(line.lstrip().startswith(_BULLETS) for line in lines), n_lines)
        if high("gopher_too_many_bullets", "bullet line fraction", bullets, self.max_bullet_lines_ratio):
            return
        ended = sum(line.rstrip().endswith(_ELLIPSES) for line in lines) if "..." in text or "…" in text else 0
        endings = _ratio(ended, n_lines)
        if high("gopher_too_many_end_ellipsis", "ellipsis line fraction", endings, self.max_ellipsis_lines_ratio):
            return
        if self.max_non_alpha_words_ratio and n_words:
            with_letter = int(np.logical_or.reduceat(alpha_table()[cp], starts).sum())
            fraction = with_letter / n_words
            if low("gopher_below_alpha_threshold", "words with a letter", fraction, self.max_non_alpha_words_ratio):
                return
        if self.min_stop_words:
            found = len(self.stop_words.intersection(words))
            low("gopher_enough_stop_words", "distinct stop words", found, self.min_stop_words)


_ARGS = {
    "gopher_short_doc": "min_doc_words",
    "gopher_long_doc": "max_doc_words",
    "gopher_below_avg_threshold": "min_avg_word_length",
    "gopher_above_avg_threshold": "max_avg_word_length",
    "gopher_too_many_hashes": "max_symbol_word_ratio",
    "gopher_too_many_ellipsis": "max_symbol_word_ratio",
    "gopher_too_many_bullets": "max_bullet_lines_ratio",
    "gopher_too_many_end_ellipsis": "max_ellipsis_lines_ratio",
    "gopher_below_alpha_threshold": "max_non_alpha_words_ratio",
    "gopher_enough_stop_words": "min_stop_words",
}


def _arg(rule: str) -> str:
    return _ARGS[rule]


def _ratio(count: int, total: int) -> float:
    """``count / total``; with nothing to divide by (no words or lines, which datatrove cannot divide by either)
    NaN, which fails no rule."""
    return count / total if total else float("nan")
