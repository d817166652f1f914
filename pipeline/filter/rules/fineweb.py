"""FineWeb's own quality rules (Penedo et al. 2024) as datatrove 0.10.1's ``FineWebQualityFilter`` applies them:
the share of non-blank lines ending in terminal punctuation, the share of short lines, the share of characters
in duplicated lines and newlines per word. The first failing rule drops the document.
Contract: docs/stages.md, Quality rules."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import filterfalse
from operator import itemgetter
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.filter.options import FilterOptions, fraction, made, number, strings
from pipeline.filter.outcome import Outcomes, fmt, judge_each, text_bytes
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
class FineWebFilter:
    """Drops documents with too few punctuated lines, too many short or duplicated lines, or list-like text."""

    name = NAME
    Options = FineWebOptions

    def __init__(self, options: FineWebOptions | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(FineWebOptions, options, kwargs, NAME)
        self.stop_chars = tuple(sorted(TERMINAL_PUNCTUATION)) if o.stop_chars is None else o.stop_chars
        self._stop_set = frozenset(self.stop_chars) if all(len(c) == 1 for c in self.stop_chars) else None
        self._stop_table = None if self._stop_set is None else table_of(self._stop_set)
        self.line_punct_thr, self.line_punct_exclude_zero = o.line_punct_thr, o.line_punct_exclude_zero
        self.short_line_thr, self.short_line_length = o.short_line_thr, o.short_line_length
        self.char_duplicates_ratio, self.new_line_ratio = o.char_duplicates_ratio, o.new_line_ratio

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask, first failing rule and per-rule measures of every document of ``batch``."""
        kernel = _compiled(batch) if self._stop_table is not None and batch.num_rows else None
        if kernel is None:
            return judge_each(NAME, RULES, batch, self._judge)
        out = Outcomes(NAME, RULES, batch.num_rows)
        data, offsets = text_bytes(batch)
        counts = np.zeros((batch.num_rows, 4), dtype=np.int64)
        kernel.line_counts(data, offsets, self._stop_table, space_table(), float(self.short_line_length), counts)
        left = self._line_rules(out, counts)
        repeated = np.zeros(len(left), dtype=np.int64)
        kernel.duplicate_chars(data, offsets, left, space_table(), repeated)
        ratio = repeated / counts[left, 3]
        out.measures["char_dup_ratio"][left] = ratio
        fails = ratio > self.char_duplicates_ratio
        for i, value in zip(left[fails].tolist(), ratio[fails].tolist(), strict=True):
            self._drop_duplicates(out, i, value)
        left = left[~fails]
        texts = batch.column("text").take(pa.array(left)).to_pylist()
        for i, text in zip(left.tolist(), texts, strict=True):
            self._list_rule(out, i, text or "")
        return out.result()

    def _line_rules(self, out: Outcomes, counts: np.ndarray) -> np.ndarray:
        """The empty, punctuated-line and short-line rules over every document at once, from each one's non-blank,
        punctuated and short lines (``counts``' first three columns); the documents left."""
        n_lines, ended, short = counts[:, 0], counts[:, 1], counts[:, 2]
        out.measures["empty"][:] = n_lines
        left = np.flatnonzero(n_lines > 0)
        for i in np.flatnonzero(n_lines == 0).tolist():
            out.drop(i, "empty", "no non-blank line")
        ratio = ended[left] / n_lines[left]
        out.measures["line_punct_ratio"][left] = ratio
        fails = (ratio < self.line_punct_thr) & ~((ratio == 0) & self.line_punct_exclude_zero)
        for i, value in zip(left[fails].tolist(), ratio[fails].tolist(), strict=True):
            detail = f"lines ending in terminal punctuation {fmt(value)} < line_punct_thr {fmt(self.line_punct_thr)}"
            out.drop(i, "line_punct_ratio", detail)
        left = left[~fails]
        ratio = short[left] / n_lines[left]
        out.measures["short_line_ratio"][left] = ratio
        fails = ratio > self.short_line_thr
        limit = self.short_line_length
        for i, value in zip(left[fails].tolist(), ratio[fails].tolist(), strict=True):
            detail = f"lines of at most {limit} characters {fmt(value)} > short_line_thr {fmt(self.short_line_thr)}"
            out.drop(i, "short_line_ratio", detail)
        return left[~fails]

    def _judge(self, out: Outcomes, i: int, text: str) -> None:
        lines = list(filter(None, text.split("\n")))
        if any(map(str.isspace, lines)):
            lines = list(filterfalse(str.isspace, lines))
        out.measure(i, "empty", len(lines))
        if not lines:
            out.drop(i, "empty", "no non-blank line")
            return
        if self._stop_set is not None:
            ended = sum(map(self._stop_set.__contains__, map(itemgetter(-1), lines)))
        else:
            ended = sum(line.endswith(self.stop_chars) for line in lines)
        ratio = ended / len(lines)
        out.measure(i, "line_punct_ratio", ratio)
        if ratio < self.line_punct_thr and not (ratio == 0 and self.line_punct_exclude_zero):
            detail = f"lines ending in terminal punctuation {fmt(ratio)} < line_punct_thr {fmt(self.line_punct_thr)}"
            out.drop(i, "line_punct_ratio", detail)
            return
        limit = self.short_line_length
        ratio = sum(map(limit.__ge__, map(len, lines))) / len(lines)
        out.measure(i, "short_line_ratio", ratio)
        if ratio > self.short_line_thr:
            detail = f"lines of at most {limit} characters {fmt(ratio)} > short_line_thr {fmt(self.short_line_thr)}"
            out.drop(i, "short_line_ratio", detail)
            return
        ratio = duplicates(lines)[1] / (len(text) - text.count("\n"))
        out.measure(i, "char_dup_ratio", ratio)
        if ratio > self.char_duplicates_ratio:
            self._drop_duplicates(out, i, ratio)
            return
        self._list_rule(out, i, text)

    def _drop_duplicates(self, out: Outcomes, i: int, ratio: float) -> None:
        detail = f"duplicate line characters {fmt(ratio)} > char_duplicates_ratio {fmt(self.char_duplicates_ratio)}"
        out.drop(i, "char_dup_ratio", detail)

    def _list_rule(self, out: Outcomes, i: int, text: str) -> None:
        """Newlines per word, the last rule."""
        n_words = count_words(text)
        newlines = text.count("\n")
        ratio = newlines / n_words if n_words else float("inf")
        out.measure(i, "list_ratio", ratio)
        if ratio > self.new_line_ratio:
            out.drop(i, "list_ratio", f"newlines per word {fmt(ratio)} > new_line_ratio {fmt(self.new_line_ratio)}")


def _compiled(batch: pa.RecordBatch) -> ModuleType | None:
    """The line kernels when this batch runs compiled (the FILTER switch, by its text's bytes), else None."""
    if not FILTER.use("fineweb_lines", batch.column("text").nbytes):
        return None
    # lazy: importing numba and loading (or compiling) the kernels costs seconds, paid only by calls that use them
    from pipeline.filter.rules import line_counts_numba

    return line_counts_numba
