"""FineWeb's own quality rules (Penedo et al. 2024) as datatrove 0.10.1's ``FineWebQualityFilter`` applies them:
the share of non-blank lines ending in terminal punctuation, the share of short lines, the share of characters
in duplicated lines and newlines per word. The first failing rule drops the document.
Contract: docs/stages.md, Quality rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import filterfalse
from operator import itemgetter
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.filter.base import COUNT, BaseFilter, RuleThreshold
from pipeline.filter.options import FilterOptions, fraction, made, number, strings
from pipeline.filter.outcome import Rule, as_columns, decide, nulls, numeric, text_bytes, texts_of
from pipeline.filter.registry import register
from pipeline.numba_backend import FILTER
from pipeline.stage_api.filter import FilterResult
from pipeline.text.chars import space_table, table_of
from pipeline.text.english.words import count_words
from pipeline.text.punctuation import TERMINAL_PUNCTUATION
from pipeline.text.repetition import duplicates

NAME = "fineweb"
RULES = ("empty", "line_punct_ratio", "short_line_ratio", "char_dup_ratio", "list_ratio")


@dataclass(frozen=True)
class FineWebOptions(FilterOptions):
    """The options of :class:`FineWebFilter`: datatrove 0.10.1's ``FineWebQualityFilter`` arguments."""

    line_punct_thr: float = 0.12
    """Smallest fraction of non-blank lines ending in terminal punctuation, in [0, 1]."""
    line_punct_exclude_zero: bool = False
    """Keep a document none of whose lines ends in terminal punctuation (as far as that rule goes)."""
    stop_chars: tuple[str, ...] | None = None
    """The terminal punctuation (None: datatrove's set)."""
    short_line_thr: float = 0.67
    """Largest fraction of lines of at most ``short_line_length`` characters, in [0, 1]."""
    short_line_length: int = 30
    """What a short line is at most, in characters."""
    char_duplicates_ratio: float = 0.01
    """Largest fraction of characters in lines that repeat an earlier line, in [0, 1]."""
    new_line_ratio: float = 0.3
    """Most newlines per word."""

    def check(self) -> None:
        for option in ("line_punct_thr", "short_line_thr", "char_duplicates_ratio"):
            fraction(self, option)
        number(self, "short_line_length")
        number(self, "new_line_ratio")
        strings(self, "stop_chars")


@register(NAME)
class FineWebFilter(BaseFilter):
    """Drops documents with too few punctuated lines, too many short or duplicated lines, or list-like text."""

    name = NAME
    Options = FineWebOptions
    RULE_THRESHOLDS = {
        "line_punct_ratio": RuleThreshold("min", "line_punct_thr"),
        "short_line_ratio": RuleThreshold("max", "short_line_thr"),
        "char_dup_ratio": RuleThreshold("max", "char_duplicates_ratio"),
        "list_ratio": RuleThreshold("max", "new_line_ratio", COUNT),
    }
    # the options that only decide (docs/stages.md, Re-deciding from the signals)
    DECIDES = (
        "line_punct_thr",
        "line_punct_exclude_zero",
        "short_line_thr",
        "char_duplicates_ratio",
        "new_line_ratio",
    )

    def __init__(self, options: FineWebOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(FineWebOptions, options, kwargs, NAME)
        self.stop_chars = tuple(sorted(TERMINAL_PUNCTUATION)) if o.stop_chars is None else o.stop_chars
        self._stop_set = frozenset(self.stop_chars) if all(len(c) == 1 for c in self.stop_chars) else None
        self._stop_table = None if self._stop_set is None else table_of(self._stop_set)
        self.line_punct_thr, self.line_punct_exclude_zero = o.line_punct_thr, o.line_punct_exclude_zero
        self.short_line_thr, self.short_line_length = o.short_line_thr, o.short_line_length
        self.char_duplicates_ratio, self.new_line_ratio = o.char_duplicates_ratio, o.new_line_ratio

    def signal_types(self) -> dict[str, pa.DataType]:
        """The measures the rules decide on (docs/stages.md, Signals)."""
        return dict(SIGNALS)

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask, first failing rule and per-rule measures of every document of ``batch``."""
        signals = self.measure(batch)
        return replace(self.decide(signals, batch.num_rows), signals=signals)

    def measure(self, batch: pa.RecordBatch) -> dict[str, pa.Array]:
        """The measures of every document of ``batch`` (NaN where a text has no line): with ``annotate`` all of them,
        else ``list_ratio`` (the word split: the costly part) only where the earlier rules keep the document, null
        (not taken) after a first failing rule."""
        n = batch.num_rows
        values = {key: np.full(n, np.nan) for key in SIGNALS}
        kernel = _compiled(batch) if self._stop_table is not None and n else None
        texts: list[str] | None = None
        if kernel is None:
            texts = texts_of(batch)
            for i, text in enumerate(texts):
                for key, value in self._line_measures(text).items():
                    values[key][i] = value
        else:
            data, offsets = text_bytes(batch)
            counts = np.zeros((n, 4), dtype=np.int64)
            kernel.line_counts(data, offsets, self._stop_table, space_table(), float(self.short_line_length), counts)
            n_lines = counts[:, 0]
            values["lines"][:] = n_lines
            left = np.flatnonzero(n_lines > 0)
            values["line_punct_ratio"][left] = counts[left, 1] / n_lines[left]
            values["short_line_ratio"][left] = counts[left, 2] / n_lines[left]
            repeated = np.zeros(len(left), dtype=np.int64)
            kernel.duplicate_chars(data, offsets, left, space_table(), repeated)
            values["char_dup_ratio"][left] = repeated / counts[left, 3]
        with_lines = values["lines"] > 0
        wanted = with_lines if self.options.annotate else with_lines & decide(NAME, self.rules()[:-1], values, n).keep
        rows = np.flatnonzero(wanted)
        some = batch.column("text").take(pa.array(rows)).to_pylist() if texts is None else map(texts.__getitem__, rows)
        for i, text in zip(rows.tolist(), some, strict=True):
            values["list_ratio"][i] = _list_ratio(text or "")
        columns = as_columns(values, SIGNALS)
        untaken = with_lines & ~wanted
        if untaken.any():
            columns["list_ratio"] = pa.array(values["list_ratio"], SIGNALS["list_ratio"], mask=untaken)
        return columns

    def _line_measures(self, text: str) -> dict[str, float]:
        """The line measures of ``text`` (all but ``list_ratio``), without the compiled kernels."""
        lines = list(filter(None, text.split("\n")))
        if any(map(str.isspace, lines)):
            lines = list(filterfalse(str.isspace, lines))
        if not lines:
            return {"lines": 0}
        if self._stop_set is not None:
            ended = sum(map(self._stop_set.__contains__, map(itemgetter(-1), lines)))
        else:
            ended = sum(line.endswith(self.stop_chars) for line in lines)
        return {
            "lines": len(lines),
            "line_punct_ratio": ended / len(lines),
            "short_line_ratio": sum(map(self.short_line_length.__ge__, map(len, lines))) / len(lines),
            "char_dup_ratio": duplicates(lines)[1] / (len(text) - text.count("\n")),
        }

    def decide(self, signals: Mapping[str, pa.Array], n: int) -> FilterResult:
        """The decision of the rules, in datatrove's order, from the measures alone."""
        return decide(NAME, self.rules(), numeric(signals), n, nulls(signals)).result()

    def threshold_options(self) -> dict[str, tuple[str, str]]:
        """Rule -> (its measure, its threshold option): the report's "what if" steps."""
        options = ("line_punct_thr", "short_line_thr", "char_duplicates_ratio", "new_line_ratio")
        rules = ("line_punct_ratio", "short_line_ratio", "char_dup_ratio", "list_ratio")
        return {rule: (rule, option) for rule, option in zip(rules, options, strict=True)}

    def rules(self) -> list[Rule]:
        """The rules in order, each on its measure."""
        limit = self.short_line_length
        return [
            Rule("empty", "lines", "min", 1, "no non-blank line"),
            Rule(
                "line_punct_ratio",
                "line_punct_ratio",
                "min",
                self.line_punct_thr,
                "lines ending in terminal punctuation {value} < line_punct_thr {limit}",
                zero_passes=self.line_punct_exclude_zero,
            ),
            Rule(
                "short_line_ratio",
                "short_line_ratio",
                "max",
                self.short_line_thr,
                f"lines of at most {limit} characters {{value}} > short_line_thr {{limit}}",
            ),
            Rule(
                "char_dup_ratio",
                "char_dup_ratio",
                "max",
                self.char_duplicates_ratio,
                "duplicate line characters {value} > char_duplicates_ratio {limit}",
            ),
            Rule(
                "list_ratio",
                "list_ratio",
                "max",
                self.new_line_ratio,
                "newlines per word {value} > new_line_ratio {limit}",
            ),
        ]


SIGNALS: dict[str, pa.DataType] = {
    "lines": pa.int64(),
    "line_punct_ratio": pa.float64(),
    "short_line_ratio": pa.float64(),
    "char_dup_ratio": pa.float64(),
    "list_ratio": pa.float64(),
}


def _list_ratio(text: str) -> float:
    """Newlines per word (infinite without a word)."""
    n_words = count_words(text)
    return text.count("\n") / n_words if n_words else float("inf")


def _compiled(batch: pa.RecordBatch) -> ModuleType | None:
    """The line kernels when this batch runs compiled (the FILTER switch, by its text's bytes), else None."""
    if not FILTER.use("fineweb_lines", batch.column("text").nbytes):
        return None
    # lazy: importing numba and loading (or compiling) the kernels costs seconds, paid only by calls that use them
    from pipeline.filter.rules import line_counts_numba

    return line_counts_numba
