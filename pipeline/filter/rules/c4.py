"""C4's cleaning rules (Raffel et al. 2020, section 2.2) as datatrove 0.10.1's ``C4QualityFilter`` applies them,
and optionally its bad-words rule (``C4BadWordsFilter``) with a word list the user gives.

Line by line (or sentence by sentence with ``split_paragraph=False``): a line with a word longer than
``max_word_length`` goes, Wikipedia citation marks are removed, a line must end in terminal punctuation (not an
ellipsis) and have ``min_words_per_line`` words, lines mentioning javascript or a cookie / terms-of-use phrase go;
a kept line with "lorem ipsum" or a curly bracket drops the whole document, and so do fewer than
``min_num_sentences`` sentences in the kept lines. Kept documents get the kept lines as their text.
Contract: docs/stages.md, Quality rules."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.config import ConfigError
from pipeline.filter.base import COUNT, BaseFilter, RuleThreshold
from pipeline.filter.options import FilterOptions, OptionError, made
from pipeline.filter.options import number as in_range
from pipeline.filter.outcome import Outcomes, as_columns, fmt, rewritten, texts_of, with_text
from pipeline.filter.registry import register
from pipeline.stage_api.filter import FilterResult
from pipeline.text.english.words import count_sentences, split_sentences

NAME = "c4"
RULES = ("lorem_ipsum", "curly_bracket", "too_few_sentences", "document_removed_with_badwords")
_CITATION = re.compile(r"\[(?:\d*|edit|citation needed)\]")
_LINE_ENDS = (".", "?", "!", '"', "'")
_POLICY = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")


def _bad_words_pattern(path: str) -> re.Pattern[str]:
    """A search for any word of the file at ``path`` (one per line), not inside a longer word."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise OptionError("bad_words_file", f"cannot read {path}: {exc}") from exc
    words = sorted({line.strip() for line in lines} - {""}, key=lambda w: (-len(w), w))
    if not words:
        raise OptionError("bad_words_file", f"{path} holds no words")
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, words)) + r")(?!\w)")


@dataclass(frozen=True)
class C4Options(FilterOptions):
    """The options of :class:`C4Filter`: datatrove 0.10.1's ``C4QualityFilter`` arguments and a bad-words list."""

    split_paragraph: bool = True
    """Judge the text line by line (True) or sentence by sentence."""
    remove_citations: bool = True
    """Remove Wikipedia citation marks (``[1]``, ``[edit]``, ``[citation needed]``)."""
    filter_no_terminal_punct: bool = True
    """Drop a line that does not end in terminal punctuation (or ends in an ellipsis)."""
    min_num_sentences: int = 5
    """Drop a document with fewer sentences in its kept lines (-1: off)."""
    min_words_per_line: int = 3
    """Drop a line of fewer words (-1: off)."""
    max_word_length: int = 1000
    """Drop a line with a longer word (-1: off)."""
    filter_lorem_ipsum: bool = True
    """Drop a document with "lorem ipsum" in a kept line."""
    filter_javascript: bool = True
    """Drop a line mentioning javascript."""
    filter_curly_bracket: bool = True
    """Drop a document with a curly bracket in a kept line."""
    filter_policy: bool = True
    """Drop a line with a cookie or terms-of-use phrase."""
    bad_words_file: str | None = field(default=None, metadata={"file": True})
    """A UTF-8 file of words, one per line: a document holding one is dropped (fingerprinted by content)."""

    def check(self) -> None:
        for option in ("min_num_sentences", "min_words_per_line", "max_word_length"):
            in_range(self, option, allow=(-1,))
        if self.bad_words_file is not None:
            _bad_words_pattern(self.bad_words_file)  # readable, with words


@register(NAME)
class C4Filter(BaseFilter):
    """Removes C4's unwanted lines from every document and drops documents C4 would not keep."""

    name = NAME
    Options = C4Options
    # the options that only decide (docs/stages.md, Re-deciding from the signals)
    DECIDES = ("min_num_sentences", "filter_lorem_ipsum", "filter_curly_bracket")
    RULE_THRESHOLDS = {"too_few_sentences": RuleThreshold("min", "min_num_sentences", COUNT)}

    def __init__(self, options: C4Options | None = None, /, **kwargs: Any) -> None:
        o = self.options = made(C4Options, options, kwargs, NAME)
        self.split_paragraph, self.remove_citations = o.split_paragraph, o.remove_citations
        self.filter_no_terminal_punct = o.filter_no_terminal_punct
        self.min_num_sentences, self.min_words_per_line = o.min_num_sentences, o.min_words_per_line
        self.max_word_length = o.max_word_length
        self.filter_lorem_ipsum, self.filter_javascript = o.filter_lorem_ipsum, o.filter_javascript
        self.filter_curly_bracket, self.filter_policy = o.filter_curly_bracket, o.filter_policy
        try:
            self.bad_words = None if o.bad_words_file is None else _bad_words_pattern(o.bad_words_file)
        except OptionError as exc:
            raise ConfigError(f"filter.{NAME}.{exc.option}", exc.message) from None

    def signal_types(self) -> dict[str, pa.DataType]:
        """The measures the rules decide on (docs/stages.md, Signals)."""
        types = dict(SIGNALS)
        if self.bad_words is not None:
            types["bad_word"] = pa.string()
        return types

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Keep mask, first failing rule, per-rule measures and the cleaned text of every document."""
        signals, cleaned = self.measure(batch)
        return with_text(self.decide(signals, batch.num_rows), batch.column("text"), cleaned, signals)

    def measure(self, batch: pa.RecordBatch) -> tuple[dict[str, pa.Array], pa.Array]:
        """The measures of every document of ``batch``, and its text as C4 cleans it: with ``annotate`` all of them,
        else after a kept line that drops the document ("lorem ipsum" or a curly bracket, its rule on) only the
        line numbers: ``sentences``, ``rewritten`` and ``bad_word`` are not taken (null; the text stays as it was)."""
        texts = texts_of(batch)
        values: dict[str, list[object]] = {key: [] for key in self.signal_types()}
        cleaned = []
        lazy = not self.options.annotate
        stopped = []
        for text in texts:
            kept, lorem, curly, sentences = self._clean(text, lazy)
            values["lorem_ipsum_line"].append(lorem)
            values["curly_bracket_line"].append(curly)
            values["sentences"].append(sentences)
            if self.bad_words is not None:
                found = None if kept is None else self.bad_words.search(kept.lower())
                values["bad_word"].append(None if found is None else found.group())
            cleaned.append(text if kept is None else kept)
            stopped.append(kept is None)
        text = pa.array(cleaned, pa.string())
        columns = as_columns(values, self.signal_types())
        columns["rewritten"] = rewritten(batch.column("text"), text)
        if any(stopped):
            columns["rewritten"] = pc.if_else(pa.array(stopped), pa.scalar(None, pa.int8()), columns["rewritten"])
        return columns, text

    def threshold_options(self) -> dict[str, tuple[str, str]]:
        """Rule -> (its measure, its threshold option): the report's "what if" steps."""
        return {"too_few_sentences": ("sentences", "min_num_sentences")}

    def decide(self, signals: Mapping[str, pa.Array], n: int) -> FilterResult:
        """C4's decision from the measures alone: the first kept line with "lorem ipsum" or a curly bracket, then
        too few sentences, then a bad word; a document reaching the sentences not taken is undecided (``unknown``)."""
        out = Outcomes(NAME, RULES, n)
        lorem = signals["lorem_ipsum_line"].to_pylist()
        curly = signals["curly_bracket_line"].to_pylist()
        sentences = signals["sentences"].to_pylist()
        bad = signals["bad_word"].to_pylist() if self.bad_words is not None and "bad_word" in signals else [None] * n
        for i in range(n):
            at_lorem = lorem[i] if self.filter_lorem_ipsum else 0
            at_curly = curly[i] if self.filter_curly_bracket else 0
            if at_lorem and (not at_curly or at_lorem <= at_curly):
                out.measure(i, "lorem_ipsum", 1.0)
                out.drop(i, "lorem_ipsum", f"'lorem ipsum' in kept line {at_lorem} (filter_lorem_ipsum)")
                continue
            if at_curly:
                out.measure(i, "curly_bracket", 1.0)
                out.drop(i, "curly_bracket", f"'{{' in kept line {at_curly} (filter_curly_bracket)")
                continue
            if sentences[i] is None:  # not taken (measured after a dropping line): its decision needs its text
                out.unknown[i], out.keep[i] = True, False
                continue
            for rule, on in (("lorem_ipsum", self.filter_lorem_ipsum), ("curly_bracket", self.filter_curly_bracket)):
                if on:
                    out.measure(i, rule, 0.0)
            if self.min_num_sentences != -1:
                out.measure(i, "too_few_sentences", sentences[i])
                if sentences[i] < self.min_num_sentences:
                    detail = f"sentences in kept lines {sentences[i]} < min_num_sentences {fmt(self.min_num_sentences)}"
                    out.drop(i, "too_few_sentences", detail)
                    continue
            if self.bad_words is not None:
                out.measure(i, "document_removed_with_badwords", float(bad[i] is not None))
                if bad[i] is not None:
                    out.drop(i, "document_removed_with_badwords", f"bad word {bad[i]!r} (bad_words_file)")
        return out.result()

    def _clean(self, text: str, lazy: bool) -> tuple[str | None, int, int, int | None]:
        """The kept lines of ``text`` joined, the number of the first kept line with "lorem ipsum" and with a curly
        bracket (0: none), and the sentences in the kept lines, as if neither of those two rules were on; ``lazy``:
        after a kept line that drops the document (one of those two, its rule on), only the line numbers are
        sought (the kept text and the sentences: None)."""
        pieces = text.splitlines() if self.split_paragraph else split_sentences(text)
        sentences = lorem = curly = 0
        stopped = False
        kept: list[str] = []
        for number, piece in enumerate(pieces, 1):
            line = piece.strip()
            # the checks that only skip a line commute: the cheap ones first, words only for lines still kept
            if self.remove_citations and "[" in line:
                cited = _CITATION.sub("", line)
            else:
                cited = line
            if self.filter_no_terminal_punct and (not cited.endswith(_LINE_ENDS) or cited.endswith("...")):
                continue
            words = line.split()  # before citations are removed, as datatrove counts them
            if len(words) < self.min_words_per_line:
                continue
            limit = self.max_word_length
            if limit != -1 and len(line) > limit and max(map(len, words)) > limit:  # no word is longer than its line
                continue
            line = cited
            lower = line.lower()
            if not lorem and "lorem ipsum" in lower:
                lorem = number
            if self.filter_javascript and "javascript" in lower:
                continue
            if not curly and "{" in line:
                curly = number
            if stopped or (lazy and (lorem and self.filter_lorem_ipsum or curly and self.filter_curly_bracket)):
                stopped = True  # dropped: the other line number is still sought (a re-decision may switch this off)
                if lorem and curly:
                    break
                continue
            if self.filter_policy and any(phrase in lower for phrase in _POLICY):
                continue
            sentences += count_sentences(line) if self.split_paragraph else 1
            kept.append(line)
        if stopped:
            return None, lorem, curly, None
        return ("\n" if self.split_paragraph else " ").join(kept).strip(), lorem, curly, sentences


SIGNALS: dict[str, pa.DataType] = {
    "lorem_ipsum_line": pa.int64(),
    "curly_bracket_line": pa.int64(),
    "sentences": pa.int64(),
    "rewritten": pa.int8(),
}
