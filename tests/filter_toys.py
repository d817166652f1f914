"""Toy filters for the filter stage's tests (registered by their decorators when this module is imported, and by
``TOYS`` targets in fixtures), in a module of their own so that Spark's workers import them. Their rules are
simple enough for a test to apply by itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.filter.base import BaseFilter
from pipeline.filter.options import FilterOptions, made
from pipeline.filter.registry import register
from pipeline.stage_api.filter import FilterResult

TOYS = {
    "toy_length": "tests.filter_toys:LengthFilter",
    "toy_script": "tests.filter_toys:ScriptFilter",
    "toy_digits": "tests.filter_toys:DigitFilter",
}


@dataclass(frozen=True)
class LengthOptions(FilterOptions):
    min_words: int = 5
    """Fewest whitespace words."""
    max_words: int | None = None
    """Most whitespace words (None: no limit)."""


@register("toy_length")
class LengthFilter(BaseFilter):
    """Drops a document of fewer than ``min_words`` whitespace words (``toy_length.too_short``) or of more than
    ``max_words`` (``toy_length.too_long``, off when None)."""

    name = "toy_length"
    Options = LengthOptions

    def __init__(self, options: LengthOptions | None = None, /, **kwargs: Any) -> None:
        o = made(LengthOptions, options, kwargs, self.name)
        self.min_words, self.max_words = o.min_words, o.max_words

    def thresholds(self) -> dict[str, tuple[float, str]]:
        found = {"toy_length.too_short": (float(self.min_words), "min")}
        if self.max_words is not None:
            found["toy_length.too_long"] = (float(self.max_words), "max")
        return found

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        words = np.array([len(t.split()) for t in batch.column("text").to_pylist()], np.float64)
        short = words < self.min_words
        long = ~short & (words > self.max_words) if self.max_words is not None else np.zeros(len(words), bool)
        reason = ["too_short" if s else "too_long" if g else None for s, g in zip(short, long, strict=True)]
        detail = [None if r is None else f"{int(w)} words" for r, w in zip(reason, words, strict=True)]
        measures = {"too_short": words}
        if self.max_words is not None:
            measures["too_long"] = np.where(short, np.nan, words)  # evaluated only where the first rule passed
        return FilterResult(~(short | long), reason, detail, measures=measures)


@dataclass(frozen=True)
class ScriptOptions(FilterOptions):
    languages: list[str] | None = None
    """Labels to keep (None: all)."""


@register("toy_script")
class ScriptFilter(BaseFilter):
    """Labels each document ``ascii`` when every character is ASCII, else ``other``, with the ASCII fraction as its
    score; keeps the ``languages`` listed (None: all)."""

    name = "toy_script"
    Options = ScriptOptions

    def __init__(self, options: ScriptOptions | None = None, /, **kwargs: Any) -> None:
        self.languages = made(ScriptOptions, options, kwargs, self.name).languages

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        texts = batch.column("text").to_pylist()
        scores = np.array([sum(c.isascii() for c in t) / max(len(t), 1) for t in texts])
        labels = ["ascii" if s == 1.0 else "other" for s in scores]
        keep = np.array([self.languages is None or lab in self.languages for lab in labels])
        reason = [None if k else "not_listed" for k in keep]
        detail = [None if k else f"label {lab}" for k, lab in zip(keep, labels, strict=True)]
        columns = {"language": pa.array(labels, pa.string()), "language_score": pa.array(scores, pa.float64())}
        return FilterResult(keep, reason, detail, measures={"score": scores}, columns=columns)


@dataclass(frozen=True)
class DigitOptions(FilterOptions):
    replacement: str = "#"
    """What every ASCII digit becomes."""


@register("toy_digits")
class DigitFilter(BaseFilter):
    """Rewrites every ASCII digit to ``replacement``; drops nothing; counts the documents it changed."""

    name = "toy_digits"
    Options = DigitOptions

    def __init__(self, options: DigitOptions | None = None, /, **kwargs: Any) -> None:
        self.replacement = made(DigitOptions, options, kwargs, self.name).replacement

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        texts = batch.column("text").to_pylist()
        new = ["".join(self.replacement if c in "0123456789" else c for c in t) for t in texts]
        changed = sum(a != b for a, b in zip(texts, new, strict=True))
        digits = np.array([sum(c in "0123456789" for c in t) for t in texts], np.float64)
        n = len(texts)
        keep = np.ones(n, bool)
        return FilterResult(keep, [None] * n, [None] * n, pa.array(new), changed, measures={"digits": digits})
