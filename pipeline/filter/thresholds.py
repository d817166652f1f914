"""Each rule's histogram bins (docs/stages.md, The filter stage).

A rule ``"<filter>.<rule>"`` drops a document whose measured value is below its threshold (direction ``min``)
or above it (``max``); each filter declares where its rules' thresholds are and what they measure
(:attr:`pipeline.filter.base.BaseFilter.RULE_THRESHOLDS`). A histogram has :data:`BINS` equal bins over fixed bounds
per rule (a fraction: [0, 1]; a count or length: [0, 2 x threshold]), plus one bin below and one above, so every task
bins alike and the report draws distributions without rereading documents.
"""

from __future__ import annotations

import numpy as np

from pipeline.filter.base import FRACTION

BINS = 40


def bin_edges(threshold: float | None, kind: str | None = None) -> list[float]:
    """The :data:`BINS` + 1 fixed edges of the histogram of a rule measuring a ``kind`` of value (None: a fraction
    when its ``threshold`` lies in [0, 1])."""
    if kind == FRACTION or (kind is None and threshold is not None and 0 <= threshold <= 1):
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
