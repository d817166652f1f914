"""The filters a config entry may name: name -> ``"module:Class"``, imported only when a run uses it
(docs/stages.md, The filter stage).

A filter class takes its settings as keyword-only constructor arguments; a config entry's keys other than
``name`` are those arguments, checked against the constructor's signature (:mod:`pipeline.filter.entries`).
:func:`register` adds a filter under a new name (a plugin, or a test's toy filter); the class must be importable
by Spark's workers, since the stage ships filter objects to its tasks.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

FILTERS: dict[str, str] = {
    "language": "pipeline.filter.language:LanguageFilter",
    "gopher_repetition": "pipeline.filter.gopher_repetition:GopherRepetitionFilter",
    "gopher_quality": "pipeline.filter.gopher_quality:GopherQualityFilter",
    "c4": "pipeline.filter.c4:C4Filter",
    "fineweb": "pipeline.filter.fineweb:FineWebFilter",
    "pii": "pipeline.filter.pii:PIIFilter",
}


def register(name: str, target: str) -> None:
    """Make ``name`` a filter a config entry may name, built from ``target`` (``"module:Class"``)."""
    if ":" not in target:
        raise ValueError(f"filter {name!r}: target {target!r} must look like 'module:Class'")
    FILTERS[name] = target


def unregister(name: str) -> None:
    """Forget a filter added by :func:`register` (tests)."""
    FILTERS.pop(name, None)


def filter_class(name: str) -> type:
    """The class of filter ``name`` (imports its module); KeyError for an unknown name."""
    module, _, cls = FILTERS[name].partition(":")
    found: type = getattr(importlib.import_module(module), cls)
    return found


def keyword_parameters(cls: type) -> dict[str, inspect.Parameter]:
    """The keyword-only parameters of ``cls``'s constructor: the keys a config entry may give."""
    params = inspect.signature(cls).parameters.values()
    return {p.name: p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def build(entry: dict[str, Any]) -> Any:
    """The filter object of a checked config entry (``{"name": ..., **keyword arguments}``)."""
    settings = {k: v for k, v in entry.items() if k != "name"}
    return filter_class(entry["name"])(**settings)
