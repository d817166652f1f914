"""The base class of a filter the config may name (docs/stages.md, The filter stage; CONTRIBUTING.md, Adding a filter).

A filter is a subclass of :class:`BaseFilter` in one module of :mod:`pipeline.filter.rules` (or any importable
module), decorated with ``@register("name")``. It declares, as class attributes:

- ``name``: its name in the config and the prefix of its removal reasons (``"<name>.<rule>"``);
- ``Options``: its :class:`~pipeline.filter.options.FilterOptions` dataclass (a documented field per config key);
- ``RULE_THRESHOLDS``: rule -> :class:`RuleThreshold`, the option each rule compares its measure with (what
  ``filter/summary.json`` records and bins the histograms by);
- ``DECIDES``: the options that only decide, not measure (thresholds and rule switches): a change of them alone is
  re-decided from ``filter/signals/``; None (the default) for a filter that cannot decide from its signals;
- ``READS``: the data besides the documents it may be handed (a stage before the filter stage passes it on).

and overrides ``apply`` (the :class:`pipeline.stage_api.filter.Filter` contract) and, where it has them, the hooks
below, whose defaults describe a filter that sets no column, ranks nothing and checks nothing across entries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from pipeline.filter.options import FilterOptions, made
from pipeline.stage_api.filter import FilterResult

if TYPE_CHECKING:
    from pipeline.config import PipelineConfig

FRACTION, COUNT = "fraction", "count"  # what a rule measures: its histogram spans [0, 1], or [0, 2 x threshold]
Threshold = tuple[float, str]  # (threshold, "min" | "max")


@dataclass(frozen=True)
class RuleThreshold:
    """Where one rule's threshold is: ``min`` drops a value below it, ``max`` one above it."""

    direction: str
    """``"min"`` or ``"max"``."""
    option: str
    """The option holding the threshold (None or not a finite number: the rule is off)."""
    kind: str = FRACTION
    """What the rule measures: :data:`FRACTION` or :data:`COUNT` (fixes its histogram's bounds)."""
    n: int | None = None
    """For an option listing ``(n, threshold)`` pairs: the ``n`` whose threshold this is."""

    def value(self, values: Mapping[str, Any]) -> float | None:
        """The threshold in a filter's option ``values``; None when the rule is off."""
        found = values.get(self.option)
        if self.n is not None:
            found = dict(found or ()).get(self.n)
        if isinstance(found, bool) or not isinstance(found, (int, float)) or not math.isfinite(found):
            return None
        return float(found)


class BaseFilter:
    """A filter the config may name: its declarations and hooks (the module docstring lists them)."""

    name: ClassVar[str]
    Options: ClassVar[type[FilterOptions]] = FilterOptions
    RULE_THRESHOLDS: ClassVar[Mapping[str, RuleThreshold]] = {}
    DECIDES: ClassVar[tuple[str, ...] | None] = None
    READS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, options: Any = None, /, **kwargs: Any) -> None:
        self.options: Any = made(self.Options, options, kwargs, self.name)

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        """Decide for every row of ``batch`` (columns ``doc_id``, ``source``, ``text`` at least)."""
        raise NotImplementedError(self.name)

    def thresholds(self) -> dict[str, Threshold]:
        """``{"<name>.<rule>": (threshold, direction)}`` of every rule switched on, from :attr:`RULE_THRESHOLDS`
        and the options."""
        found: dict[str, Threshold] = {}
        if not self.RULE_THRESHOLDS:
            return found
        values = self.options.values()
        for rule, where in self.RULE_THRESHOLDS.items():
            value = where.value(values)
            if value is not None:
                found[f"{self.name}.{rule}"] = (value, where.direction)
        return found

    @classmethod
    def rule_kinds(cls) -> dict[str, str]:
        """``{"<name>.<rule>": kind}`` of every declared rule, on or off."""
        return {f"{cls.name}.{rule}": where.kind for rule, where in cls.RULE_THRESHOLDS.items()}

    def signal_types(self) -> dict[str, pa.DataType]:
        """Measure -> Arrow type of each signal ``filter/signals/`` keeps (docs/stages.md, Signals); by default a
        double per rule with a threshold."""
        prefix = f"{self.name}."
        return {rule.removeprefix(prefix): pa.float64() for rule in self.thresholds()}

    def decide(self, signals: Mapping[str, pa.Array], n: int) -> FilterResult:
        """The decision of ``n`` documents from their signals alone (a filter with :attr:`DECIDES` set)."""
        raise NotImplementedError(f"filter {self.name!r} cannot decide from its signals")

    def threshold_options(self) -> dict[str, tuple[str, str]]:
        """Rule -> (its measure, its threshold option): the rules the report's "what if" steps vary (none by
        default)."""
        return {}

    def directions(self) -> dict[str, str]:
        """Rule -> ``"min"`` or ``"max"`` of the rules of :meth:`threshold_options`."""
        return {rule: where.direction for rule, where in self.RULE_THRESHOLDS.items()}

    def columns(self) -> list[str]:
        """The float64 columns it sets on every document it keeps (none by default)."""
        return []

    def ranking(self) -> dict[str, Any] | None:
        """What the filter stage ranks the whole run by after the batches (``label``, ``column``, ``keep_top``,
        ``by``, ``buckets``, ``bucket_column``, ``reason``); None by default."""
        return None

    @classmethod
    def check_config(cls, config: PipelineConfig) -> None:
        """Rules across the config's entries of this filter or other sections, once its entries are checked one by
        one; raise ConfigError naming the key (nothing by default)."""

    @classmethod
    def can_redecide(cls) -> bool:
        """Whether a change of :attr:`DECIDES` alone is re-decided from the signals."""
        return cls.DECIDES is not None
