"""Checking a rule filter's keyword arguments (its config entry): one line naming the key on bad input."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.config import ConfigError


def key(filter_name: str, arg: str) -> str:
    """The config key of argument ``arg`` of filter ``filter_name``."""
    return f"filter.{filter_name}.{arg}"


def number(filter_name: str, arg: str, value: object, optional: bool = True, allow: Sequence[float] = ()) -> None:
    """``value`` must be a non-negative number (or None when ``optional``, or one of ``allow`` such as -1)."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(key(filter_name, arg), f"expected a number, got {value!r}")
    if value < 0 and value not in allow:
        raise ConfigError(key(filter_name, arg), f"must not be negative, got {value!r}")


def flag(filter_name: str, arg: str, value: object) -> None:
    """``value`` must be true or false."""
    if not isinstance(value, bool):
        raise ConfigError(key(filter_name, arg), f"expected true or false, got {value!r}")


def ngram_thresholds(filter_name: str, arg: str, value: object) -> tuple[tuple[int, float], ...]:
    """``value`` as pairs ``(n, fraction)`` with ``n`` a positive integer."""
    if not isinstance(value, (list, tuple)):
        raise ConfigError(key(filter_name, arg), f"expected a list of [n, fraction] pairs, got {value!r}")
    pairs: list[tuple[int, float]] = []
    for item in value:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise ConfigError(key(filter_name, arg), f"expected [n, fraction] pairs, got {item!r}")
        n, fraction = item
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(key(filter_name, arg), f"n must be a positive integer, got {n!r}")
        number(filter_name, arg, fraction, optional=False)
        pairs.append((n, fraction))
    return tuple(pairs)


def strings(filter_name: str, arg: str, value: object, optional: bool = True) -> tuple[str, ...] | None:
    """``value`` as a tuple of non-empty strings (None when ``optional`` and absent)."""
    if value is None and optional:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ConfigError(key(filter_name, arg), f"expected a list of strings, got {value!r}")
    if not all(isinstance(s, str) and s for s in value):
        raise ConfigError(key(filter_name, arg), f"expected non-empty strings, got {value!r}")
    return tuple(value)
