"""Megatron's blend notations: the flat ``weight prefix weight prefix ...`` list and ``--data-path``."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def parse_blend(blend: str | Sequence[str | float]) -> tuple[list[float] | None, list[str]]:
    """Parse ``"30 prefixA 70 prefixB"`` (or its list form) into ``(weights, prefixes)``.

    Follows megatron-core's ``get_blend_from_list``: an odd-length list, or one whose every
    even-position item is not a number, is a plain list of prefixes and gives ``weights=None``.
    Weights are returned as given (not normalised) and must be finite and > 0.
    """
    items = blend.split() if isinstance(blend, str) else [str(x) for x in blend]
    if not items:
        raise ValueError("empty blend")
    if len(items) % 2 == 1:
        return None, [p.strip() for p in items]
    weights: list[float | None] = []
    for raw in items[0::2]:
        try:
            weights.append(float(raw))
        except ValueError:
            weights.append(None)
    if all(x is None for x in weights):
        return None, [p.strip() for p in items]
    if any(x is None for x in weights):
        bad = [items[2 * i] for i, x in enumerate(weights) if x is None]
        raise ValueError(f"blend mixes weights and non-numeric items at weight positions: {bad}")
    given = [x for x in weights if x is not None]  # all of them: a None was refused above
    if not all(math.isfinite(x) and x > 0 for x in given):
        raise ValueError(f"blend weights must be finite and > 0, got {weights}")
    return [float(x) for x in given], [p.strip() for p in items[1::2]]


def megatron_data_path(weights: Sequence[float], prefixes: Sequence[str], normalize: bool = True) -> str:
    """Build Megatron's ``--data-path`` value, e.g. ``"0.3 prefixA 0.7 prefixB"``.

    Weights are normalised to sum 1 unless ``normalize=False`` and printed with Python's shortest
    round-trip ``repr`` so that Megatron parses back the same doubles.
    """
    if len(weights) != len(prefixes) or not prefixes:
        raise ValueError(f"need one weight per prefix, got {len(weights)} weights, {len(prefixes)} prefixes")
    w = np.asarray(weights, dtype=np.float64)
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"weights must be finite and > 0 for Megatron, got {w.tolist()}")
    if normalize:
        w = w / w.sum()
    for p in prefixes:
        if not p or any(c.isspace() for c in p):
            raise ValueError(f"prefix {p!r} is empty or has whitespace, which --data-path cannot carry")
    return " ".join(f"{float(x)!r} {p}" for x, p in zip(w, prefixes, strict=True))
