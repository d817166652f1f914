"""Each rule's threshold, direction and histogram bins (docs/stages.md, The filter stage).

A rule ``"<filter>.<rule>"`` drops a document whose measured value is below its threshold (direction ``min``)
or above it (``max``). The thresholds are the filter's keyword arguments, read from its checked config entry
through :data:`KNOWN` (datatrove's rule names and arguments); a filter may instead give them itself with a
``thresholds()`` method returning ``{rule: (threshold, direction)}``. A histogram has :data:`BINS` equal bins
over fixed bounds per rule (a fraction: [0, 1]; a count or length: [0, 2 x threshold]), plus one bin below
and one above, so every task bins alike and the report draws distributions without rereading documents.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

BINS = 40
Threshold = tuple[float, str]  # (threshold, "min" | "max")
Getter = Callable[[Mapping[str, Any]], Any]


def _arg(name: str) -> Getter:
    return lambda kwargs: kwargs.get(name)


def _pair(name: str, n: int) -> Getter:
    return lambda kwargs: dict(kwargs.get(name) or ()).get(n)


_FRACTION, _COUNT = "fraction", "count"
# rule -> (direction, its threshold from the filter's keyword arguments, the kind of value it measures)
KNOWN: dict[str, tuple[str, Getter, str]] = {
    "language.score": ("min", _arg("min_score"), _FRACTION),
    "language.low_score": ("min", _arg("min_score"), _FRACTION),
    "gopher_quality.gopher_short_doc": ("min", _arg("min_doc_words"), _COUNT),
    "gopher_quality.gopher_long_doc": ("max", _arg("max_doc_words"), _COUNT),
    "gopher_quality.gopher_below_avg_threshold": ("min", _arg("min_avg_word_length"), _COUNT),
    "gopher_quality.gopher_above_avg_threshold": ("max", _arg("max_avg_word_length"), _COUNT),
    "gopher_quality.gopher_too_many_hashes": ("max", _arg("max_symbol_word_ratio"), _FRACTION),
    "gopher_quality.gopher_too_many_ellipsis": ("max", _arg("max_symbol_word_ratio"), _FRACTION),
    "gopher_quality.gopher_too_many_bullets": ("max", _arg("max_bullet_lines_ratio"), _FRACTION),
    "gopher_quality.gopher_too_many_end_ellipsis": ("max", _arg("max_ellipsis_lines_ratio"), _FRACTION),
    "gopher_quality.gopher_below_alpha_threshold": ("min", _arg("max_non_alpha_words_ratio"), _FRACTION),
    "gopher_quality.gopher_enough_stop_words": ("min", _arg("min_stop_words"), _COUNT),
    "gopher_repetition.dup_para_frac": ("max", _arg("dup_para_frac"), _FRACTION),
    "gopher_repetition.dup_para_char_frac": ("max", _arg("dup_para_char_frac"), _FRACTION),
    "gopher_repetition.dup_line_frac": ("max", _arg("dup_line_frac"), _FRACTION),
    "gopher_repetition.dup_line_char_frac": ("max", _arg("dup_line_char_frac"), _FRACTION),
    **{f"gopher_repetition.top_{n}_gram": ("max", _pair("top_n_grams", n), _FRACTION) for n in range(1, 11)},
    **{f"gopher_repetition.duplicated_{n}_n_grams": ("max", _pair("dup_n_grams", n), _FRACTION) for n in range(1, 21)},
    "c4.too_few_sentences": ("min", _arg("min_num_sentences"), _COUNT),
    "fineweb.line_punct_ratio": ("min", _arg("line_punct_thr"), _FRACTION),
    "fineweb.short_line_ratio": ("max", _arg("short_line_thr"), _FRACTION),
    "fineweb.char_dup_ratio": ("max", _arg("char_duplicates_ratio"), _FRACTION),
    "fineweb.list_ratio": ("max", _arg("new_line_ratio"), _COUNT),
}


def rule_thresholds(step: Any, entry: Mapping[str, Any]) -> dict[str, Threshold]:
    """``{rule: (threshold, direction)}`` of a filter built from ``entry``: its own ``thresholds()`` if it has
    one, else the :data:`KNOWN` rules of its name whose argument is set (a rule switched off has none)."""
    own = getattr(step, "thresholds", None)
    if callable(own):
        return {rule: (float(value), direction) for rule, (value, direction) in own().items()}
    found: dict[str, Threshold] = {}
    prefix = f"{entry['name']}."
    for rule, (direction, getter, _) in KNOWN.items():
        value = getter(entry) if rule.startswith(prefix) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            found[rule] = (float(value), direction)
    return found


def bin_edges(rule: str, threshold: float | None) -> list[float]:
    """The :data:`BINS` + 1 fixed edges of ``rule``'s histogram."""
    kind = KNOWN[rule][2] if rule in KNOWN else None
    if kind == _FRACTION or (kind is None and threshold is not None and 0 <= threshold <= 1):
        high = 1.0
    elif threshold is not None and threshold > 0:
        high = 2.0 * threshold
    else:
        high = float(BINS)
    return [round(high * i / BINS, 12) for i in range(BINS + 1)]


def histogram(values: np.ndarray, edges: list[float]) -> np.ndarray:
    """Counts of the finite ``values`` in ``len(edges) + 1`` bins: below the first edge, each [e_i, e_i+1) (the last
    one closed), and above the last edge (NaN: the rule did not run on that document, not counted)."""
    finite = values[np.isfinite(values)]
    slots = np.searchsorted(np.asarray(edges, np.float64), finite, side="right")
    slots[finite == edges[-1]] = len(edges) - 1
    return np.bincount(slots, minlength=len(edges) + 1).astype(np.int64)
