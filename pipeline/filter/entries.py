"""A run's filter lists, checked against the registry and the filters' signatures: each source's effective list
(its own ``filter`` or the run's), with every keyword argument's value (docs/stages.md, The filter stage)."""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

from pipeline.config import ConfigError, PipelineConfig
from pipeline.config.load import coerce_number
from pipeline.filter import registry


def source_entries(config: PipelineConfig) -> dict[str, list[dict[str, Any]]]:
    """Per source, the filter entries that apply to it: its own ``filter`` list, or else the run's."""
    return {s.name: list(s.filter if s.filter is not None else config.filter) for s in config.sources}


def runs_filters(config: PipelineConfig) -> bool:
    """Whether any source has a filter (else the filter stage is skipped and documents go on untouched)."""
    return any(source_entries(config).values())


def check_config(config: PipelineConfig) -> None:
    """Every entry names a registered filter and gives only its keyword arguments, each of the declared type;
    a ConfigError names the key (``filter.2.min_doc_words``, ``sources.1.filter.0.name``)."""
    lists = [("filter", config.filter)] + [(f"sources.{i}.filter", s.filter) for i, s in enumerate(config.sources)]
    for key, entries in lists:
        for i, entry in enumerate(entries or []):
            checked_entry(entry, f"{key}.{i}")


def effective(config: PipelineConfig) -> dict[str, list[dict[str, Any]]]:
    """Per source, its checked entries with every keyword argument (defaults filled in), as the stage builds them."""
    return {name: [checked_entry(e, name) for e in entries] for name, entries in source_entries(config).items()}


def checked_entry(entry: dict[str, Any], key: str) -> dict[str, Any]:
    """``entry`` with its values converted to the declared types and the defaults filled in; ConfigError otherwise."""
    name = entry.get("name")
    if name not in registry.FILTERS:
        known = ", ".join(sorted(registry.FILTERS))
        raise ConfigError(f"{key}.name", f"unknown filter {name!r} (known filters: {known})")
    cls = registry.filter_class(name)
    params = registry.keyword_parameters(cls)
    try:
        hints = typing.get_type_hints(getattr(cls, "__init__"))  # noqa: B009 - mypy refuses cls.__init__
    except Exception:  # an annotation that does not resolve here: values are passed unchecked
        hints = {}
    out: dict[str, Any] = {"name": name}
    for arg in entry:
        if arg != "name" and arg not in params:
            known = ", ".join(sorted(params)) or "none"
            raise ConfigError(f"{key}.{arg}", f"unknown key of filter {name!r} (its keys: {known})")
    for arg, param in params.items():
        if arg in entry:
            out[arg] = _typed(hints.get(arg, Any), entry[arg], f"{key}.{arg}")
        elif param.default is not inspect.Parameter.empty:
            out[arg] = param.default
        else:
            raise ConfigError(f"{key}.{arg}", f"filter {name!r} needs this key")
    return out


def _typed(tp: Any, value: Any, key: str) -> Any:
    """``value`` as type ``tp`` (YAML lists become tuples where a tuple is declared); ConfigError if it is not one."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any or tp is object:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _typed(option, value, key)
            except ConfigError as exc:
                errors.append(exc)
        raise errors[0] if errors else ConfigError(key, f"unexpected value {value!r}")
    if tp in (bool, int, float):
        return coerce_number(tp, value, key)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(key, f"expected a string, got {value!r}")
        return value
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(key, f"expected a list, got {value!r}")
        if origin is tuple and len(args) > 1 and args[-1] is not Ellipsis and len(args) != len(value):
            raise ConfigError(key, f"expected a list of {len(args)} values, got {value!r}")
        kinds = args[:-1] if origin is tuple and args and args[-1] is Ellipsis else args
        items = [_typed(kinds[min(i, len(kinds) - 1)] if kinds else Any, v, f"{key}.{i}") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple or tp is tuple else items
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise ConfigError(key, f"expected a mapping, got {value!r}")
        return value
    return value  # a type the config cannot spell (a class): passed as given
