"""FineWeb's own quality rules (Penedo et al. 2024) as datatrove 0.10.1's ``FineWebQualityFilter`` applies them:
the share of non-blank lines ending in terminal punctuation, the share of short lines, the share of characters
in duplicated lines and newlines per word. The first failing rule drops the document.
Contract: docs/stages.md, Quality rules."""

from __future__ import annotations

from itertools import filterfalse
from operator import itemgetter

import pyarrow as pa

from pipeline.filter import settings
from pipeline.filter.outcome import Outcomes, fmt, judge_each
from pipeline.filter.punctuation import TERMINAL_PUNCTUATION
from pipeline.filter.repetition import duplicates
from pipeline.filter.words import count_words
from pipeline.stage_api.filter import FilterResult

NAME = "fineweb"
RULES = ("empty", "line_punct_ratio", "short_line_ratio", "char_dup_ratio", "list_ratio")


class FineWebFilter:
    """Drops documents with too few punctuated lines, too many short or duplicated lines, or list-like text."""

    name = NAME

    def __init__(
        self,
        *,
        line_punct_thr: float = 0.12,
        line_punct_exclude_zero: bool = False,
        stop_chars: tuple[str, ...] | None = None,
        short_line_thr: float = 0.67,
        short_line_length: int = 30,
        char_duplicates_ratio: float = 0.01,
        new_line_ratio: float = 0.3,
    ) -> None:
        for arg, value in [
            ("line_punct_thr", line_punct_thr),
            ("short_line_thr", short_line_thr),
            ("short_line_length", short_line_length),
            ("char_duplicates_ratio", char_duplicates_ratio),
            ("new_line_ratio", new_line_ratio),
        ]:
            settings.number(NAME, arg, value, optional=False)
        settings.flag(NAME, "line_punct_exclude_zero", line_punct_exclude_zero)
        given = settings.strings(NAME, "stop_chars", stop_chars)
        self.stop_chars = tuple(sorted(TERMINAL_PUNCTUATION)) if given is None else given
        self._stop_set = frozenset(self.stop_chars) if all(len(c) == 1 for c in self.stop_chars) else None
        self.line_punct_thr, self.line_punct_exclude_zero = line_punct_thr, line_punct_exclude_zero
        self.short_line_thr, self.short_line_length = short_line_thr, short_line_length
        self.char_duplicates_ratio, self.new_line_ratio = char_duplicates_ratio, new_line_ratio

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask, first failing rule and per-rule measures of every document of ``batch``."""
        return judge_each(NAME, RULES, batch, self._judge)

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
            detail = f"duplicate line characters {fmt(ratio)} > char_duplicates_ratio {fmt(self.char_duplicates_ratio)}"
            out.drop(i, "char_dup_ratio", detail)
            return
        n_words = count_words(text)
        newlines = text.count("\n")
        ratio = newlines / n_words if n_words else float("inf")
        out.measure(i, "list_ratio", ratio)
        if ratio > self.new_line_ratio:
            out.drop(i, "list_ratio", f"newlines per word {fmt(ratio)} > new_line_ratio {fmt(self.new_line_ratio)}")
