"""Gopher's repetition rules (Rae et al. 2021, table A1) as datatrove 0.10.1's ``GopherRepetitionFilter`` applies
them: duplicate paragraphs and lines (by count and by characters), the top 2-4-gram's share of the characters
and the share of characters in duplicated 5-10-grams. The first failing rule drops the document.
Contract: docs/stages.md, Quality rules."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.filter.base import BaseFilter, RuleThreshold
from pipeline.filter.options import FilterOptions, OptionError, fraction, made
from pipeline.filter.outcome import Rule, decide, nulls, numeric, texts_of
from pipeline.filter.registry import register
from pipeline.stage_api.filter import FilterResult
from pipeline.text.chars import codepoints
from pipeline.text.english.words import split_words
from pipeline.text.repetition import compiled, duplicates, word_grams

NAME = "gopher_repetition"
_PARAGRAPH_BREAK = re.compile(r"\n{2,}")


def _lines(text: str) -> list[str]:
    """The pieces of ``re.split(r"\n+", text)`` (in another order): the non-empty lines, and an empty piece before
    a leading and after a trailing newline."""
    lines = list(filter(None, text.split("\n")))
    return lines + [""] * (text.startswith("\n") + text.endswith("\n"))


def _paragraphs(text: str) -> list[str]:
    """``re.split(r"\n{2,}", text)``: plain ``str.split`` when no break is longer than two newlines."""
    return text.split("\n\n") if "\n\n\n" not in text else _PARAGRAPH_BREAK.split(text)


def _pieces(text: str, kernel: ModuleType | None) -> tuple[int, int, int, int, int, int]:
    """(paragraphs, repeated paragraphs, their characters, lines, repeated lines, their characters) of ``text``,
    through the compiled ``kernel`` when given."""
    if kernel is not None:
        return kernel.paragraph_and_line_duplicates(codepoints(text))
    paragraphs, lines = _paragraphs(text.strip()), _lines(text)
    return (len(paragraphs), *duplicates(paragraphs), len(lines), *duplicates(lines))


_TOP_N_GRAMS = ((2, 0.2), (3, 0.18), (4, 0.16))
_DUP_N_GRAMS = ((5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10))


@dataclass(frozen=True)
class GopherRepetitionOptions(FilterOptions):
    """The options of :class:`GopherRepetitionFilter`: datatrove 0.10.1's ``GopherRepetitionFilter`` arguments,
    fractions in [0, 1] (a null or 0 line or paragraph threshold switches its rule off)."""

    dup_line_frac: float | None = 0.3
    """Largest fraction of lines that repeat an earlier line."""
    dup_para_frac: float | None = 0.3
    """Largest fraction of paragraphs that repeat an earlier paragraph."""
    dup_line_char_frac: float | None = 0.2
    """Largest fraction of characters in repeated lines."""
    dup_para_char_frac: float | None = 0.2
    """Largest fraction of characters in repeated paragraphs."""
    top_n_grams: tuple[tuple[int, float], ...] = _TOP_N_GRAMS
    """[n, fraction] pairs: the largest character fraction of the most frequent word n-gram."""
    dup_n_grams: tuple[tuple[int, float], ...] = _DUP_N_GRAMS
    """[n, fraction] pairs: the largest character fraction in word n-grams that occur more than once."""

    def check(self) -> None:
        for option in ("dup_line_frac", "dup_para_frac", "dup_line_char_frac", "dup_para_char_frac"):
            fraction(self, option)
        for option in ("top_n_grams", "dup_n_grams"):
            for i, (n, limit) in enumerate(getattr(self, option)):
                if n < 1:
                    raise OptionError(f"{option}.{i}", f"n must be a positive integer, got {n!r}")
                if not 0 <= limit <= 1:
                    raise OptionError(f"{option}.{i}", f"must be a fraction in [0, 1], got {limit!r}")


@register(NAME)
class GopherRepetitionFilter(BaseFilter):
    """Drops documents whose paragraphs, lines or word n-grams repeat too much (a falsy line/paragraph
    threshold switches its rule off)."""

    name = NAME
    Options = GopherRepetitionOptions
    # the options that only decide (the n-gram pairs name measures too: a changed pair is measured again)
    RULE_THRESHOLDS = {
        **{rule: RuleThreshold("max", rule) for rule in ("dup_para_frac", "dup_para_char_frac", "dup_line_frac")},
        "dup_line_char_frac": RuleThreshold("max", "dup_line_char_frac"),
        **{f"top_{n}_gram": RuleThreshold("max", "top_n_grams", n=n) for n in range(1, 11)},
        **{f"duplicated_{n}_n_grams": RuleThreshold("max", "dup_n_grams", n=n) for n in range(1, 21)},
    }
    DECIDES = ("dup_line_frac", "dup_para_frac", "dup_line_char_frac", "dup_para_char_frac")

    def __init__(self, options: GopherRepetitionOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(GopherRepetitionOptions, options, kwargs, NAME)
        self.dup_line_frac = o.dup_line_frac
        self.dup_para_frac = o.dup_para_frac
        self.dup_line_char_frac = o.dup_line_char_frac
        self.dup_para_char_frac = o.dup_para_char_frac
        self.top_n_grams, self.dup_n_grams = o.top_n_grams, o.dup_n_grams
        self.rules = [
            "empty",
            "dup_para_frac",
            "dup_para_char_frac",
            "dup_line_frac",
            "dup_line_char_frac",
            *(f"top_{n}_gram" for n, _ in self.top_n_grams),
            *(f"duplicated_{n}_n_grams" for n, _ in self.dup_n_grams),
        ]

    def signal_types(self) -> dict[str, pa.DataType]:
        """The measures the rules decide on (docs/stages.md, Signals): the text's characters, then one fraction per
        rule."""
        return {"chars": pa.int64(), **{m: pa.float64() for m in dict.fromkeys(self.rules[1:])}}

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask, first failing rule and per-rule measures of every document of ``batch``."""
        signals = self.measure(batch)
        return replace(self.decide(signals, batch.num_rows), signals=signals)

    def measure(self, batch: pa.RecordBatch) -> dict[str, pa.Array]:
        """The measures of every document of ``batch`` (NaN where a text has none): with ``annotate`` all of them,
        else up to the first failing rule, the n-gram measures after it null (not taken: the costly part)."""
        types = self.signal_types()
        texts = texts_of(batch)
        values = {key: np.full(len(texts), np.nan) for key in types}
        taken = {key: np.zeros(len(texts), dtype=bool) for key in types}
        for i, text in enumerate(texts):
            found = self._measures(text, lazy=not self.options.annotate)
            for key in types if not text else found:
                values[key][i] = found.get(key, np.nan)
                taken[key][i] = True
        return {key: pa.array(values[key], kind, mask=~taken[key]) for key, kind in types.items()}

    def _measures(self, text: str, lazy: bool) -> dict[str, float]:
        size = len(text)
        if not size:
            return {"chars": 0}
        kernel = compiled(size)
        paragraphs, count, chars, lines, line_count, line_chars = _pieces(text, kernel)
        found = {
            "chars": size,
            "dup_para_frac": count / paragraphs,
            "dup_para_char_frac": chars / size,
            "dup_line_frac": line_count / lines,
            "dup_line_char_frac": line_chars / size,
        }
        if lazy and any(getattr(self, rule) and found[rule] > getattr(self, rule) for rule, _ in _WHOLE):
            return found
        grams = word_grams(split_words(text), kernel)
        for n, limit in self.top_n_grams:
            top = grams.top_chars(n)
            found[f"top_{n}_gram"] = value = float("nan") if top is None else top / size
            if lazy and value > limit:
                return found
        for n, limit in self.dup_n_grams:
            found[f"duplicated_{n}_n_grams"] = value = grams.duplicated_chars(n) / size
            if lazy and value > limit:
                return found
        return found

    def decide(self, signals: Mapping[str, pa.Array], n: int) -> FilterResult:
        """The decision of the rules, in datatrove's order, from the measures alone."""
        return decide(NAME, self.rules_in_order(), numeric(signals), n, nulls(signals)).result()

    def threshold_options(self) -> dict[str, tuple[str, str]]:
        """Rule -> (its measure, its threshold option): the report's "what if" steps (the n-gram pairs have none)."""
        return {rule: (rule, rule) for rule, _ in _WHOLE}

    def rules_in_order(self) -> list[Rule]:
        """The rules in order, each on its measure (a falsy line or paragraph threshold: off)."""
        rules = [Rule("empty", "chars", "min", 1, "empty text")]
        for rule, what in _WHOLE:
            rules.append(Rule(rule, rule, "max", getattr(self, rule) or None, f"{what} {{value}} > {rule} {{limit}}"))
        for n, limit in self.top_n_grams:
            what = f"top {n}-gram character fraction {{value}} > {{limit}}"
            rules.append(Rule(f"top_{n}_gram", f"top_{n}_gram", "max", limit, what))
        for n, limit in self.dup_n_grams:
            what = f"duplicated {n}-gram character fraction {{value}} > {{limit}}"
            rules.append(Rule(f"duplicated_{n}_n_grams", f"duplicated_{n}_n_grams", "max", limit, what))
        return rules


_WHOLE = (
    ("dup_para_frac", "duplicate paragraph fraction"),
    ("dup_para_char_frac", "duplicate paragraph character fraction"),
    ("dup_line_frac", "duplicate line fraction"),
    ("dup_line_char_frac", "duplicate line character fraction"),
)
