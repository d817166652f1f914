"""The contract every stage keeps: a :class:`Stage` runs on a run context and returns a :class:`StageResult`.

A stage owns its whole definition here: the config it depends on (its fingerprint), the directories it
writes (what resume verifies), the checks it makes before any work, its per-source tally (what the
accounting adds up), what it does once the run is complete and accounted for, and its report section.
The runner, the accounting and the report loop over the registered stages and know none of them by name.

A stage's result carries its counts exactly as the stage's marker and ``manifest.json`` record them
(JSON), and the per-source figures the accounting checks, as typed fields. A reused stage's result is
rebuilt from its marker's counts by the same :attr:`Stage.tally`, so a fresh and a reused stage look the
same to everything downstream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.config import PipelineConfig
from pipeline.stage_api.context import RunContext


@dataclass(frozen=True)
class SourceTally:
    """One source's documents after a stage: ``read = rejected + sum(removed.values()) + documents``."""

    documents: int  # documents the stage passes on (ingest: parsed; dedup: survivors; merge-blend: written)
    read: int | None = None  # records the stage read (None: it passes on every document it gets)
    rejected: int = 0  # records it could not parse (ingest)
    removed: Mapping[str, int] = field(default_factory=dict)  # documents it took out, by reason


@dataclass(frozen=True)
class StageResult:
    """What one stage produced: its recorded counts and its per-source tally."""

    stage: str
    counts: dict[str, Any]  # written verbatim to the stage's marker and to manifest.json
    sources: dict[str, SourceTally] = field(default_factory=dict)  # empty for stages without per-source figures

    def nothing_left(self) -> bool:
        """True when the stage has sources and none of them passes a document on."""
        return bool(self.sources) and all(t.documents == 0 for t in self.sources.values())

    def documents_read(self) -> int:
        """Records read over every source (0 when the stage does not count them)."""
        return sum(t.read or 0 for t in self.sources.values())

    def removed(self) -> dict[str, int]:
        """Documents removed over every source, by reason."""
        total: dict[str, int] = {}
        for tally in self.sources.values():
            for reason, count in tally.removed.items():
                total[reason] = total.get(reason, 0) + count
        return total


def no_tally(counts: dict[str, Any]) -> dict[str, SourceTally]:
    """The tally of a stage that has no per-source document figures to check."""
    return {}


def source_tally(
    documents: str, read: str | None = None, rejected: str | None = None, removals: tuple[str, ...] = ()
) -> Callable[[dict[str, Any]], dict[str, SourceTally]]:
    """A tally read from ``counts["sources"][<source>]`` rows: the named fields become the tally's figures, each
    of ``removals`` present in a row becomes a removal reason (a run without it has no such term)."""

    def tally(counts: dict[str, Any]) -> dict[str, SourceTally]:
        return {
            name: SourceTally(
                documents=row[documents],
                read=row[read] if read else None,
                rejected=row[rejected] if rejected else 0,
                removed={reason: row[reason] for reason in removals if row.get(reason) is not None},
            )
            for name, row in counts.get("sources", {}).items()
        }

    return tally


def _nothing(*args: Any) -> None:
    return None


@dataclass(frozen=True)
class Stage:
    """A named step of a run and everything the runner, the accounting and the report need to know of it."""

    name: str
    config_keys: tuple[str, ...]  # the config sections (or fields, ``sources[].weight``) its output depends on
    inputs: Callable[[PipelineConfig], dict]  # those values, as the stage's marker records them
    body: Callable[[RunContext], dict[str, Any]]  # runs the stage; returns its counts
    outputs: tuple[str, ...] = ()  # the run-directory parts it writes (layout names): what resume verifies
    tally: Callable[[dict[str, Any]], dict[str, SourceTally]] = no_tally
    passes_on: str | None = None  # the accounting's name for the documents it passes on ("survivors", ...)
    removals_as: str | None = None  # the accounting's name for its removals by reason, per source ("filtered")
    reads: tuple[str, ...] = ()  # the run's Parquet tables it reads (layout names)
    passes: str | None = None  # the table of the documents it passes on, which the next stage reads (layout name)
    applies: Callable[[PipelineConfig], bool] = lambda config: True  # noqa: E731 - False: skipped
    stop_when_empty: bool = False  # a run stops after it when it passes no document on
    # rules of its config section that span fields; raise ConfigError naming the key (before Spark starts)
    check_config: Callable[[PipelineConfig], None] = _nothing
    # checks that need the SparkSession but no job, made before any stage runs when this one will run
    precheck: Callable[[RunContext], None] = _nothing
    # why a finished stage's outputs are out of date though its config is not (None: they are not)
    outdated: Callable[[RunContext, dict[str, Any]], str | None] = _nothing
    # after the stages asked for: its last step (the dedup index commit), given the runner's progress sink and
    # whether the run is complete and accounted for; returns what to add to manifest.json (None: nothing made)
    after_run: Callable[[RunContext, Callable[[str], None], bool], dict[str, Any] | None] = _nothing
    # its section of report.json, from the run directory and its recorded counts (None: no section)
    report: Callable[[str, dict[str, Any]], dict[str, Any] | None] = _nothing

    def run(self, ctx: RunContext) -> StageResult:
        """Run it; a missing third-party package raises its ``ImportError`` as is."""
        return self.result(self.body(ctx))

    def result(self, counts: dict[str, Any]) -> StageResult:
        """The result of counts this stage returned now or recorded in its marker earlier."""
        return StageResult(self.name, counts, self.tally(counts))

    @property
    def accounted(self) -> bool:
        """Whether its per-source documents enter the accounting equation."""
        return self.tally is not no_tally
