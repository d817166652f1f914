"""A run's filter lists, checked against the registry and each filter's typed options: each source's effective list
(its own ``filter`` or the run's), with every option's value (docs/stages.md, The filter stage)."""

from __future__ import annotations

import hashlib
from typing import Any

from pipeline import storage
from pipeline.config import ConfigError, PipelineConfig
from pipeline.filter import registry
from pipeline.filter.options import FilterOptions, parse


def source_entries(config: PipelineConfig) -> dict[str, list[dict[str, Any]]]:
    """Per source, the filter entries that apply to it: its own ``filter`` list, or else the run's."""
    return {s.name: list(s.filter if s.filter is not None else config.filter) for s in config.sources}


def runs_filters(config: PipelineConfig) -> bool:
    """Whether any source has a filter (else the filter stage is skipped and documents go on untouched)."""
    return any(source_entries(config).values())


def _lists(config: PipelineConfig) -> list[tuple[str, list[dict[str, Any]]]]:
    """(key, entries) of the run's list and of each source's own list."""
    own = [(f"sources.{i}.filter", s.filter or []) for i, s in enumerate(config.sources)]
    return [("filter", list(config.filter or [])), *own]


def check_config(config: PipelineConfig) -> None:
    """Every entry names a registered filter once per list and gives only its options, each of the declared type and
    in range (files readable, models loadable), then each listed filter's rules across entries and sections
    (``BaseFilter.check_config``); a ConfigError names the key (``filter.2.min_doc_words``,
    ``sources.1.filter.0.name``). Runs before Spark starts."""
    listed_names: dict[str, None] = {}
    for key, listed in _lists(config):
        seen: dict[str, int] = {}
        for i, entry in enumerate(listed):
            name = checked(entry, f"{key}.{i}")[0]
            if name in seen:
                raise ConfigError(
                    f"{key}.{i}.name",
                    f"filter {name!r} is listed twice ({key}.{seen[name]} and {key}.{i}); list each filter once",
                )
            seen[name] = i
            listed_names[name] = None
    for name in listed_names:
        registry.filter_class(name).check_config(config)


def checked(entry: Any, key: str) -> tuple[str, FilterOptions]:
    """(name, options) of a config entry; ConfigError naming ``<key>.<option>`` otherwise."""
    if not isinstance(entry, dict):
        raise ConfigError(key, f"expected a mapping with a filter's name, got {entry!r}")
    name = entry.get("name")
    if not isinstance(name, str) or not registry.known(name):
        raise ConfigError(f"{key}.name", f"unknown filter {name!r} (known filters: {', '.join(registry.names())})")
    values = {k: v for k, v in entry.items() if k != "name"}
    return name, parse(registry.options_class(name), values, key, name)


def checked_entry(entry: dict[str, Any], key: str) -> dict[str, Any]:
    """``entry`` with its values converted to the declared types and the defaults filled in; ConfigError otherwise."""
    name, options = checked(entry, key)
    return {"name": name, **options.values()}


def effective(config: PipelineConfig) -> dict[str, list[dict[str, Any]]]:
    """Per source, its checked entries with every option (defaults filled in), as the stage builds them."""
    return {name: [checked_entry(e, name) for e in entries] for name, entries in source_entries(config).items()}


def file_digests(config: PipelineConfig) -> dict[str, str]:
    """``<key>.<option>`` -> SHA-256 of every file a configured filter reads (bad-words lists, models), so that an
    edited file changes the stage's fingerprint (docs/stages.md, The filter stage)."""
    digests: dict[str, str] = {}
    for key, listed in _lists(config):
        for i, entry in enumerate(listed):
            for option, path in checked(entry, f"{key}.{i}")[1].files().items():
                digests[f"{key}.{i}.{option}"] = _sha256(path)
    return digests


def _sha256(path: str) -> str:
    if not storage.is_local(path):  # a model on an object store (fasttext_classifier's model)
        return hashlib.sha256(storage.read_bytes(path)).hexdigest()
    digest = hashlib.sha256()
    with open(storage.local_path(path), "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
