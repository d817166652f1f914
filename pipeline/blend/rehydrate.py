"""Rehydration (docs/blending.md, Rehydration): how many times a survivor appears in the blend, from the size of
the duplicate cluster it stands for (FineWeb-2's ``minhash_cluster_size``), by ``blend.rehydrate``.

``blend.rehydrate`` maps lower bounds of the cluster size to copies: ``{1: 1, 2: 2, 5: 5, 100: 8}`` gives a
survivor of a cluster of 3 two copies, of 5-99 five, of 100 or more eight. Pure numpy, no Spark.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pipeline.config import ConfigError, PipelineConfig

KEY = "blend.rehydrate"


def rehydrate_rules(mapping: Mapping[str, int] | Mapping[int, int] | None) -> list[tuple[int, int]] | None:
    """The (lower bound, copies) pairs of ``blend.rehydrate``, bounds rising from 1; None when it is unset.

    Raises :class:`ConfigError` naming the key for a bound that is not an integer >= 1, bounds not in rising
    order or not starting at 1, copies that are not an integer >= 1, or an empty mapping."""
    if mapping is None:
        return None
    if not mapping:
        raise ConfigError(KEY, "is empty; give at least {1: 1} (a lower bound of the cluster size -> copies)")
    rules: list[tuple[int, int]] = []
    for key, copies in mapping.items():
        text = str(key).strip()
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(f"{KEY}.{key}", "a bound must be an integer cluster size >= 1")
        if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
            raise ConfigError(f"{KEY}.{key}", f"copies must be an integer >= 1; got {copies!r}")
        bound = int(text)
        if rules and bound <= rules[-1][0]:
            raise ConfigError(f"{KEY}.{key}", f"bounds must rise in the order given; {bound} follows {rules[-1][0]}")
        rules.append((bound, copies))
    if rules[0][0] != 1:
        raise ConfigError(KEY, f"the first bound must be 1 (every cluster size needs a rule); got {rules[0][0]}")
    return rules


def config_rules(config: PipelineConfig) -> list[tuple[int, int]] | None:
    """:func:`rehydrate_rules` of the config's ``blend.rehydrate``."""
    return rehydrate_rules(config.blend.rehydrate)


def copies_for(cluster_sizes: np.ndarray, rules: list[tuple[int, int]]) -> np.ndarray:
    """Copies (int64) per cluster size: those of the largest bound at most the size."""
    sizes = np.asarray(cluster_sizes, dtype=np.int64)
    if sizes.size and int(sizes.min()) < 1:
        raise ValueError(f"cluster sizes must be >= 1, got {int(sizes.min())}")
    bounds = np.array([b for b, _ in rules], dtype=np.int64)
    copies = np.array([c for _, c in rules], dtype=np.int64)
    return copies[np.searchsorted(bounds, sizes, side="right") - 1]
