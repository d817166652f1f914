"""The filters a config entry may name, registered where they are defined (docs/stages.md, The filter stage).

A filter module decorates its class, a :class:`pipeline.filter.base.BaseFilter`, with ``@register("name")``; the
class has ``name`` (its removal reason), ``Options`` (its :class:`pipeline.filter.options.FilterOptions` dataclass),
its declarations and hooks (:mod:`pipeline.filter.base`), and a constructor taking an ``Options`` or the same values
as keyword arguments. The modules of :mod:`pipeline.filter.rules` that register
one are found by that decorator line and imported on the first lookup, so a new filter is one module and nothing else. A
filter defined elsewhere (a plugin, a test's filter) is registered when its module is imported, or lazily with
``register(name, "module:Class")``; either way its module must be importable by Spark's workers, since each
task builds its filters from the class's module and name.
"""

from __future__ import annotations

import importlib
import importlib.resources
from collections.abc import Callable
from typing import Any, TypeVar

from pipeline.filter.base import BaseFilter
from pipeline.filter.options import FilterOptions

_FILTERS: dict[str, type[BaseFilter] | str] = {}  # name -> class, or "module:Class" imported on first use
_MARK = "\n@register("  # how a module of this package that registers a filter is found
_found = False

Cls = TypeVar("Cls", bound=type)


def register(name: str, target: str | None = None) -> Callable[[Cls], Cls]:
    """Make ``name`` a filter a config entry may name: as a class decorator (``@register("c4")``), or lazily with
    ``target`` ``"module:Class"`` (imported when a run uses it)."""
    if target is not None:
        if ":" not in target:
            raise ValueError(f"filter {name!r}: target {target!r} must look like 'module:Class'")
        _FILTERS[name] = target
        return lambda cls: cls

    def decorate(cls: Cls) -> Cls:
        if not issubclass(cls, BaseFilter):
            raise TypeError(f"filter {name!r}: {cls.__name__} must subclass pipeline.filter.base.BaseFilter")
        options = getattr(cls, "Options", None)
        if not (isinstance(options, type) and issubclass(options, FilterOptions)):
            raise TypeError(f"filter {name!r}: {cls.__name__}.Options must be a FilterOptions dataclass")
        given = getattr(cls, "name", name)
        if given != name:
            raise TypeError(f"filter {name!r}: {cls.__name__}.name is {given!r}")
        setattr(cls, "name", name)  # noqa: B010 - a class attribute mypy does not know of
        _FILTERS[name] = cls
        return cls

    return decorate


def unregister(name: str) -> None:
    """Forget a filter added by :func:`register` (tests)."""
    _FILTERS.pop(name, None)


def _discover() -> None:
    """Import the modules of :mod:`pipeline.filter.rules` that register a filter (once per process)."""
    global _found
    if _found:
        return
    _found = True
    package = __name__.rpartition(".")[0] + ".rules"
    for entry in sorted(importlib.resources.files(package).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".py") and _MARK in entry.read_text(encoding="utf-8"):
            importlib.import_module(f"{package}.{entry.name[:-3]}")


def names() -> list[str]:
    """Every registered filter's name, sorted."""
    _discover()
    return sorted(_FILTERS)


def known(name: object) -> bool:
    """Whether a config entry may name ``name``."""
    _discover()
    return isinstance(name, str) and name in _FILTERS


def filter_class(name: str) -> type[BaseFilter]:
    """The class of filter ``name`` (imports its module); KeyError for an unknown name."""
    _discover()
    found = _FILTERS[name]
    if isinstance(found, str):
        module, _, attr = found.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        if not (isinstance(cls, type) and issubclass(cls, BaseFilter)):
            raise TypeError(f"filter {name!r}: {found} must subclass pipeline.filter.base.BaseFilter")
        _FILTERS[name] = cls
        return cls
    return found


def options_class(name: str) -> type[FilterOptions]:
    """The options dataclass of filter ``name``."""
    return filter_class(name).Options


def reads() -> tuple[str, ...]:
    """The data any registered filter may read besides the documents (``BaseFilter.READS``), sorted."""
    return tuple(sorted({data for name in names() for data in filter_class(name).READS}))


def target(name: str) -> str:
    """``"module:Class"`` of filter ``name``: how a Spark task finds its class."""
    cls = filter_class(name)
    return f"{cls.__module__}:{cls.__qualname__}"


def build(entry: dict[str, Any]) -> BaseFilter:
    """The filter object of a config entry (``{"name": ..., **options}``)."""
    return filter_class(entry["name"])(**{k: v for k, v in entry.items() if k != "name"})
