"""The blend's weight per source, from the config: ``blend.weights``, else the sources' weights, else sizes.

Shared by the merge-blend stage (``blend/``) and the training-indices stage (``megatron_cache/``), so both
weigh the sources alike.
"""

from __future__ import annotations

from pipeline.blend.megatron_args import parse_blend
from pipeline.config import ConfigError, PipelineConfig


def blend_weights_by_source(config: PipelineConfig) -> dict[str, float] | None:
    """The weight of every source given by ``blend.weights`` ("30 web 70 wiki"), or None when unset.

    Raises :class:`ConfigError` unless it names every configured source once, with a weight > 0.
    """
    if not config.blend.weights:
        return None
    try:
        weights, names = parse_blend(config.blend.weights)
    except ValueError as exc:
        raise ConfigError("blend.weights", str(exc)) from None
    if weights is None:
        raise ConfigError("blend.weights", "must alternate weights and source names, e.g. '30 web 70 wiki'")
    unknown = sorted(set(names) - {s.name for s in config.sources})
    if unknown:
        raise ConfigError("blend.weights", f"names unknown sources {unknown}")
    missing = [s.name for s in config.sources if s.name not in names]
    if missing:
        raise ConfigError(
            "blend.weights",
            f"needs a positive weight for every source; missing {missing} "
            "(remove a source from sources to leave it out)",
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError("blend.weights", f"names a source more than once: {repeated}")
    return dict(zip(names, weights, strict=True))


def blend_weights(config: PipelineConfig, names: list[str], sizes: list[int]) -> list[float]:
    """Weights for ``names``: ``blend.weights`` ("30 web 70 wiki"), else the sources' weights, else ``sizes``."""
    given = blend_weights_by_source(config)
    if given is not None:
        return [float(given.get(n, 0.0)) for n in names]
    if all(s.weight is not None for s in config.sources):
        return [float(config.source(n).weight or 0.0) for n in names]
    return [float(s) for s in sizes]
