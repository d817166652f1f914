"""The blend's weight per dataset, from the config: ``blend.weights``, else the sources' weights, else sizes.

A dataset is a source (``megatron/<source>``), or, when ``blend.weights`` names ``<source>/bucket=<b>``, one quality
bucket of a source (``megatron/<source>/bucket=<b>``: the source's documents whose ``quality_bucket`` is ``b``, as the
fasttext_classifier filter's ``buckets`` wrote it; docs/blending.md, Quality buckets).

Shared by the merge-blend stage (``blend/``) and the training-indices stage (``megatron_cache/``), so both
weigh the datasets alike.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.blend.megatron_args import parse_blend
from pipeline.config import ConfigError, PipelineConfig

BUCKET_NAME = re.compile(r"^(?P<source>[^/]+)/bucket=(?P<bucket>0|[1-9][0-9]*)$")
CLASSIFIER = "fasttext_classifier"


def bucket_dataset(source: str, bucket: int) -> str:
    """The dataset name of one quality bucket of a source: ``<source>/bucket=<b>`` (its prefix under ``megatron/``)."""
    return f"{source}/bucket={bucket}"


def configured_buckets(config: PipelineConfig) -> dict[str, int]:
    """{source: buckets} for the sources whose filter list has a fasttext_classifier with ``buckets`` (the raw
    value; the filter stage's own check refuses a bad one first)."""
    found: dict[str, int] = {}
    for src in config.sources:
        for entry in src.filter if src.filter is not None else config.filter:
            count: Any = entry.get("buckets") if isinstance(entry, dict) and entry.get("name") == CLASSIFIER else None
            if isinstance(count, int) and not isinstance(count, bool):
                found[src.name] = count
    return found


def _check_bucket_name(config: PipelineConfig, name: str, known: set[str]) -> tuple[str, int]:
    """(source, bucket) of a ``<source>/bucket=<b>`` name, or a ConfigError naming ``blend.weights``."""
    match = BUCKET_NAME.match(name)
    if match is None:
        raise ConfigError(
            "blend.weights",
            f"{name!r}: a name is a source, or a source's quality bucket written <source>/bucket=<n> (web/bucket=19)",
        )
    source, bucket = match["source"], int(match["bucket"])
    if source not in known:
        raise ConfigError("blend.weights", f"{name!r} names an unknown source {source!r}")
    buckets = configured_buckets(config).get(source)
    if buckets is None:
        raise ConfigError(
            "blend.weights",
            f"{name!r} weights a quality bucket, but source {source!r} has no fasttext_classifier filter with buckets",
        )
    if bucket >= buckets:
        raise ConfigError(
            "blend.weights", f"{name!r}: source {source!r} has buckets 0 to {buckets - 1} (fasttext_classifier buckets)"
        )
    return source, bucket


def bucketed_sources(config: PipelineConfig) -> dict[str, int]:
    """{source: buckets} of the sources ``blend.weights`` weighs bucket by bucket (checked; {} without any)."""
    given = blend_weights_by_source(config) or {}
    split = {BUCKET_NAME.match(n)["source"] for n in given if "/" in n}  # type: ignore[index]
    counts = configured_buckets(config)
    return {s.name: counts[s.name] for s in config.sources if s.name in split}


def blend_datasets(config: PipelineConfig) -> list[tuple[str, str, int | None]]:
    """(dataset name, source, bucket or None) of every dataset the blend may hold, in blend order: the sources in
    config order, a source weighed by buckets as its buckets 0, 1, ..."""
    split = bucketed_sources(config)
    out: list[tuple[str, str, int | None]] = []
    for src in config.sources:
        if src.name in split:
            out += [(bucket_dataset(src.name, b), src.name, b) for b in range(split[src.name])]
        else:
            out.append((src.name, src.name, None))
    return out


def blend_weights_by_source(config: PipelineConfig) -> dict[str, float] | None:
    """The weight of every dataset given by ``blend.weights`` ("30 web 70 wiki", or "2 web/bucket=1 1 web/bucket=0
    70 wiki"), or None when unset.

    Raises :class:`ConfigError` unless it names every configured source once with a weight > 0, or, for a source
    weighed by quality buckets, each of its buckets once instead.
    """
    if not config.blend.weights:
        return None
    try:
        weights, names = parse_blend(config.blend.weights)
    except ValueError as exc:
        raise ConfigError("blend.weights", str(exc)) from None
    if weights is None:
        raise ConfigError("blend.weights", "must alternate weights and source names, e.g. '30 web 70 wiki'")
    known = {s.name for s in config.sources}
    unknown = sorted({n for n in names if "/" not in n} - known)
    if unknown:
        raise ConfigError("blend.weights", f"names unknown sources {unknown}")
    pairs = {n: _check_bucket_name(config, n, known) for n in names if "/" in n}
    split = {source for source, _ in pairs.values()}
    both = sorted(split & set(names))
    if both:
        raise ConfigError(
            "blend.weights", f"weighs {both} both whole and by quality bucket; name either the source or its buckets"
        )
    counts = configured_buckets(config)
    missing = [s.name for s in config.sources if s.name not in names and s.name not in split]
    missing += [
        bucket_dataset(s, b) for s in sorted(split) for b in range(counts[s]) if bucket_dataset(s, b) not in names
    ]
    if missing:
        raise ConfigError(
            "blend.weights",
            f"needs a positive weight for every source (or each bucket of a source weighed by buckets); missing "
            f"{missing} (remove a source from sources to leave it out)",
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
