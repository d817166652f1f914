"""The contract every stage keeps: a :class:`Stage` runs on a run context and returns a :class:`StageResult`.

A stage's result carries its counts exactly as the stage's marker and ``manifest.json`` record them
(JSON), and the per-source figures the runner and the accounting check, as typed fields. A reused
stage's result is rebuilt from its marker's counts by the same :attr:`Stage.tally`, so a fresh and a
reused stage look the same to everything downstream.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipeline.config import PipelineConfig
from pipeline.run.context import RunContext

# Accounting names of the removals besides within-run duplicates (docs/dedup_index.md, Accounting); a run
# has each only when it decontaminates or keeps a dedup index.
OTHER_REMOVALS = ("contaminated", "duplicates_of_earlier_runs")


@dataclass(frozen=True)
class SourceTally:
    """One source's documents after a stage."""

    documents: int  # documents the stage passes on (ingest: parsed; dedup: survivors; merge-blend: written)
    read: int | None = None  # records the stage read (ingest: every record; dedup: its input documents)
    rejected: int | None = None  # ingest: records rejected
    removed: int | None = None  # dedup: duplicates removed
    contaminated: int | None = None  # dedup with decontamination: removed for sharing n-grams with a benchmark
    earlier_runs: int | None = None  # dedup with an index: removed as duplicates of earlier runs

    def other_removals(self) -> dict[str, int]:
        """The removals besides within-run duplicates that this run has, by their accounting name."""
        found = dict(zip(OTHER_REMOVALS, (self.contaminated, self.earlier_runs), strict=True))
        return {name: value for name, value in found.items() if value is not None}


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


def no_tally(counts: dict[str, Any]) -> dict[str, SourceTally]:
    """The tally of a stage that has no per-source document figures to check."""
    return {}


@dataclass(frozen=True)
class Stage:
    """A named step: what its output depends on, how to run it, and how to read its counts."""

    name: str
    config_keys: tuple[str, ...]  # the config sections (or fields, ``sources[].weight``) its output depends on
    inputs: Callable[[PipelineConfig], dict]  # those values, as the stage's marker records them
    body: Callable[[RunContext], dict[str, Any]]  # runs the stage; returns its counts
    tally: Callable[[dict[str, Any]], dict[str, SourceTally]] = no_tally
    reads: tuple[str, ...] = ()  # the run's Parquet tables it reads ("documents", "dedup/survivors")
    applies: Callable[[PipelineConfig], bool] = lambda config: True  # noqa: E731 - False: skipped
    # why a finished stage's outputs are out of date though its config is not (None: they are not)
    outdated: Callable[[RunContext, dict[str, Any]], str | None] = lambda ctx, counts: None  # noqa: E731

    def run(self, ctx: RunContext) -> StageResult:
        """Fetch the tables it reads, run it; a missing third-party package raises its ``ImportError`` as is."""
        for table in self.reads:
            ctx.tables.fetch(*table.split("/"))
        return self.result(self.body(ctx))

    def result(self, counts: dict[str, Any]) -> StageResult:
        """The result of counts this stage returned now or recorded in its marker earlier."""
        return StageResult(self.name, counts, self.tally(counts))
