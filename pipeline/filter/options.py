"""A filter's typed options (docs/stages.md, The filter stage): a frozen dataclass per filter, one documented field
per config key, its values converted to the declared types and checked when it is made.

A filter module defines ``XOptions(FilterOptions)`` next to its filter class: each field with its type, default
and a docstring, and a :meth:`FilterOptions.check` that refuses impossible values with :class:`OptionError`
(the helpers below: :func:`number`, :func:`fraction`, :func:`strings`). :func:`parse` makes the options of a
config entry; an error names the entry's key (``filter.2.min_doc_words``) in one line.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pipeline.config import ConfigError
from pipeline.config.load import YAML_BOOLEAN_HINT


class OptionError(ConfigError):
    """A bad option value: ``option`` is the field (with an item's index, ``top_n_grams.0``), ``message`` why; the
    config entry's key is put before it where the options are parsed."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(option, message)
        self.option, self.message = option, message


@dataclasses.dataclass(frozen=True)
class FilterOptions:
    """The base of every filter's options: values converted to the field types, then :meth:`check`."""

    annotate: bool = dataclasses.field(default=False, kw_only=True)
    """Measure every rule of every document and drop nothing, text untouched (docs/stages.md, Signals)."""

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, typed(hints.get(f.name, Any), getattr(self, f.name), f.name))
        self.check()

    def check(self) -> None:
        """Refuse impossible values (a subclass's rules); raise :class:`OptionError` naming the field."""

    def files(self) -> dict[str, str]:
        """Field -> path of every file the filter reads (fields declared ``field(metadata={"file": True})``)."""
        found = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.metadata.get("file")}
        return {name: path for name, path in found.items() if path is not None}

    def in_run(self, inputs: Mapping[str, str]) -> FilterOptions:
        """The options a task builds the filter with, given the paths of the data the filter stage was handed
        besides its documents (``inputs``: name -> path; a value naming the run's own output resolved to its
        path); these options by default."""
        return self

    def values(self) -> dict[str, Any]:
        """Every field's value by name (the filter's effective config entry, less ``name``; ``annotate`` only when
        set)."""
        found = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if not found.pop("annotate"):
            return found
        return {**found, "annotate": True}


Options = TypeVar("Options", bound=FilterOptions)


def parse(cls: type[Options], values: Mapping[str, Any], key: str, filter_name: str) -> Options:
    """``cls`` made from a config entry's ``values`` (``name`` left out); a :class:`ConfigError` names
    ``<key>.<option>`` on an unknown key, a missing one, a value of the wrong type or out of range."""
    known = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for arg in values:
        if arg not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ConfigError(f"{key}.{arg}", f"unknown key of filter {filter_name!r} (its keys: {listed})")
    for arg, f in known.items():
        if arg not in values and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{key}.{arg}", f"filter {filter_name!r} needs this key")
    try:
        return cls(**values)
    except OptionError as exc:
        raise ConfigError(f"{key}.{exc.option}", exc.message) from None


def made(cls: type[Options], given: Options | None, values: Mapping[str, Any], filter_name: str) -> Options:
    """A filter constructor's options: ``given``, or else made from its keyword arguments (errors name
    ``filter.<filter_name>.<option>``)."""
    if given is None:
        return parse(cls, values, f"filter.{filter_name}", filter_name)
    if values:
        raise TypeError(f"filter {filter_name!r}: give its options or keyword arguments, not both")
    if not isinstance(given, cls):
        raise TypeError(f"filter {filter_name!r}: expected {cls.__name__}, got {type(given).__name__}")
    return given


def typed(tp: Any, value: Any, option: str) -> Any:
    """``value`` as type ``tp`` (a YAML list becomes a tuple where a tuple is declared); :class:`OptionError`
    if it is not one. Numbers must be finite."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any or tp is object:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option_type in (a for a in args if a is not type(None)):
            try:
                return typed(option_type, value, option)
            except OptionError as exc:
                errors.append(exc)
        raise errors[0] if errors else OptionError(option, f"unexpected value {value!r}")
    if tp is bool:
        if not isinstance(value, bool):
            raise OptionError(option, f"expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionError(option, f"expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise OptionError(option, f"expected a number, got {value!r}")
        if not math.isfinite(value):
            raise OptionError(option, f"must be a finite number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            hint = f" {YAML_BOOLEAN_HINT}" if isinstance(value, bool) else ""
            raise OptionError(option, f"expected a string, got {value!r}{hint}")
        return value
    if origin in (list, tuple) or tp in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise OptionError(option, f"expected a list, got {value!r}")
        if origin is tuple and len(args) > 1 and args[-1] is not Ellipsis and len(args) != len(value):
            raise OptionError(option, f"expected a list of {len(args)} values, got {value!r}")
        kinds = args[:-1] if origin is tuple and args and args[-1] is Ellipsis else args
        items = [
            typed(kinds[min(i, len(kinds) - 1)] if kinds else Any, v, f"{option}.{i}") for i, v in enumerate(value)
        ]
        return tuple(items) if origin is tuple or tp is tuple else items
    return value  # a type the config cannot spell: passed as given


def number(
    owner: object, option: str, *, low: float = 0.0, high: float = math.inf, allow: Sequence[float] = ()
) -> None:
    """Option ``option`` of ``owner`` (None: off) must lie in [``low``, ``high``] or be one of ``allow``."""
    value = getattr(owner, option)
    if value is None or value in allow:
        return
    if value < low:
        raise OptionError(
            option, f"must not be negative, got {value!r}" if low == 0 else f"must be >= {low}, got {value!r}"
        )
    if value > high:
        raise OptionError(option, f"must be at most {high}, got {value!r}")


def fraction(owner: object, option: str) -> None:
    """Option ``option`` of ``owner`` (None: off) must be a fraction in [0, 1]."""
    value = getattr(owner, option)
    if value is not None and not 0 <= value <= 1:
        raise OptionError(option, f"must be a fraction in [0, 1], got {value!r}")


def strings(owner: object, option: str) -> None:
    """Option ``option`` of ``owner`` (None: the default) must be a non-empty list of non-empty strings."""
    value = getattr(owner, option)
    if value is not None and (not value or not all(value)):
        raise OptionError(option, f"expected a non-empty list of non-empty strings, got {list(value)!r}")
