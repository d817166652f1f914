"""The filter stage resolved once per run on the driver (docs/stages.md, The filter stage): each source's
filters with their checked settings and thresholds, each rule's histogram bins, and the summary's final form."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from pipeline.config import PipelineConfig
from pipeline.filter import entries, registry
from pipeline.filter.base import BaseFilter
from pipeline.filter.options import FilterOptions
from pipeline.filter.thresholds import bin_edges


@dataclass(frozen=True)
class Step:
    """One configured filter of a source: where its class is, its checked options and entry, its rules' thresholds."""

    target: str  # "module:Class"
    options: FilterOptions  # checked on the driver; a task does not check them again
    entry: dict[str, Any]  # {"name": ..., every option}
    thresholds: dict[str, tuple[float, str]]  # rule -> (threshold, direction)
    signals: dict[str, Any] = field(default_factory=dict)  # "<filter>.<measure>" -> its Arrow type

    @property
    def annotate(self) -> bool:
        """Whether the entry only measures (drops nothing, rewrites nothing)."""
        return bool(self.options.annotate)

    def build(self) -> BaseFilter:
        """The filter object (built in each task: filters need not pickle, a registered one is found by its path)."""
        module, _, cls = self.target.partition(":")
        made: BaseFilter = getattr(importlib.import_module(module), cls)(self.options)
        return made


@dataclass(frozen=True)
class Plan:
    """What every task needs: each source's steps, and each rule's histogram bins (the same in every task)."""

    steps: dict[str, list[Step]]
    bins: dict[str, list[float]]  # rule -> edges
    rules: dict[str, dict[str, Any]]  # rule -> {"threshold", "direction", "thresholds": {source: x}}
    columns: tuple[str, ...] = ()  # float64 columns filters set on the documents they score (the classifier's)
    ranking: dict[str, Any] | None = None  # a filter's corpus-wide ranking (fasttext_classifier keep_top, buckets)
    signals: pa.Schema = field(default_factory=lambda: pa.schema([]))  # every step's signal columns, in list order
    kinds: dict[str, str] = field(default_factory=dict)  # rule -> what it measures, as its filter declares it

    def edges(self, rule: str) -> list[float]:
        """The bin edges of ``rule`` (a rule without a threshold: :func:`bin_edges`' default)."""
        return self.bins.get(rule) or bin_edges(None, self.kinds.get(rule))


def make_plan(config: PipelineConfig, before: str | None = None, inputs: Mapping[str, str] | None = None) -> Plan:
    """Every source's steps, in its filter list's order (``before``: those before its first filter of that name;
    ``inputs``: the paths of the data the filter stage was handed besides its documents, by name); a rule's bins
    follow the first source's threshold."""
    steps: dict[str, list[Step]] = {}
    bins: dict[str, list[float]] = {}
    rules: dict[str, dict[str, Any]] = {}
    columns: list[str] = []
    ranking: dict[str, Any] | None = None
    signals: dict[str, pa.DataType] = {}
    kinds: dict[str, str] = {}
    for source, listed in entries.source_entries(config).items():
        steps[source] = []
        for i, given in enumerate(listed):
            if before is not None and isinstance(given, dict) and given.get("name") == before:
                break
            name, options = entries.checked(given, f"{source}.filter.{i}")
            entry = {"name": name, **options.values()}
            options = options.in_run(inputs or {})
            made: BaseFilter = registry.filter_class(name)(options)
            found = made.thresholds()
            kinds.update(made.rule_kinds())
            measured = {f"{name}.{measure}": kind for measure, kind in made.signal_types().items()}
            steps[source].append(Step(registry.target(name), options, entry, found, measured))
            for column, kind in measured.items():
                signals.setdefault(column, kind)
            columns += [c for c in made.columns() if c not in columns]
            ranking = made.ranking() or ranking
            for rule, (threshold, direction) in found.items():
                bins.setdefault(rule, bin_edges(threshold, kinds.get(rule)))
                meta = rules.setdefault(rule, {"threshold": threshold, "direction": direction, "thresholds": {}})
                meta["thresholds"][source] = threshold
    return Plan(steps, bins, rules, tuple(columns), ranking, pa.schema(list(signals.items())), kinds)


def summary_json(plan: Plan, merged: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """FILTER_SUMMARY's content: the effective entries per source, counts per source, each rule's histograms."""
    empty = {"read": 0, "kept": 0, "dropped": {}, "changed": {}, "languages": {}}
    measures = {}
    for rule in sorted(set(plan.rules) | set(merged["counts"])):
        meta = plan.rules.get(rule, {"threshold": None, "direction": None, "thresholds": {}})
        measures[rule] = {
            "threshold": meta["threshold"],
            "direction": meta["direction"],
            "thresholds": meta["thresholds"],
            "bins": plan.edges(rule),
            "counts": merged["counts"].get(rule, {}),
        }
    return {
        "filters": {name: [s.entry for s in plan.steps.get(name, [])] for name in names},
        "sources": {name: merged["sources"].get(name, dict(empty)) for name in names},
        "measures": measures,
    }
