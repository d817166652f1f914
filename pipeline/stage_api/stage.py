"""The contract every stage keeps: a :class:`Stage` subclass declares what it reads and what it hands on, and
overrides the hooks it needs (docs/stages.md, The Stage contract).

A stage's data flow is declared, never left on the run context: ``reads`` names the data it takes
(``"documents"``), ``passes`` maps the data it hands on to the table holding it. The runner resolves each
name to the latest earlier stage that passes it (the filter stage's documents when it runs, else ingest's)
and calls ``run(ctx, inputs)`` with one :class:`Data` per name (a name of ``optional_reads`` only when a stage
that applies passes it: the trained tokenizer, absent when the config names the tokenizer's files); ``run``
returns its counts (JSON), which the runner records and wraps as a :class:`StageResult` through
:meth:`Stage.tally`. A reused stage's result
is rebuilt from its marker's counts the same way, so a fresh and a reused stage look alike downstream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pipeline.config import PipelineConfig
from pipeline.stage_api.context import RunContext


@dataclass(frozen=True)
class SourceTally:
    """One source's documents after a stage: ``read = rejected + sum(removed.values()) + documents``."""

    documents: int  # documents the stage passes on (ingest: parsed; dedup: survivors; merge-blend: written)
    read: int | None = None  # records the stage read (None: it passes on every document it gets)
    rejected: int = 0  # records it could not parse (ingest)
    removed: Mapping[str, int] = field(default_factory=dict)  # documents it took out, by reason
    copies_added: int = 0  # copies of its documents it wrote besides them (rehydration), outside the equation


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


@dataclass(frozen=True)
class Data:
    """One declared input as the runner hands it to a stage: the run's table holding it (a layout name) and the
    stage that wrote it, with that stage's counts."""

    table: str
    stage: str
    counts: Mapping[str, Any] = field(default_factory=dict)


def source_tally(
    counts: Mapping[str, Any],
    documents: str,
    read: str | None = None,
    rejected: str | None = None,
    removals: tuple[str, ...] = (),
) -> dict[str, SourceTally]:
    """The tally of ``counts["sources"][<source>]`` rows: the named fields become the tally's figures, each of
    ``removals`` present in a row becomes a removal reason (a run without it has no such term)."""
    return {
        name: SourceTally(
            documents=row[documents],
            read=row[read] if read else None,
            rejected=row[rejected] if rejected else 0,
            removed={reason: row[reason] for reason in removals if row.get(reason) is not None},
        )
        for name, row in counts.get("sources", {}).items()
    }


class Stage:
    """A named step of a run: its declarations (class attributes) and its hooks (methods with defaults)."""

    name: ClassVar[str]
    config_keys: ClassVar[tuple[str, ...]] = ()  # config sections (or fields, ``sources[].weight``) it depends on
    version: ClassVar[int] = 1  # of config_values' form; raise it with a change upgrade() maps older values to
    reads: ClassVar[tuple[str, ...]] = ()  # the data it takes from the stages before it ("documents", "shards")
    optional_reads: ClassVar[tuple[str, ...]] = ()  # data it takes when a stage before it passes it ("tokenizer")
    passes: ClassVar[Mapping[str, str]] = {}  # the data it hands on -> the table (layout name) holding it
    writes: ClassVar[tuple[str, ...]] = ()  # the run-directory parts it writes (layout names): resume verifies them
    passes_on: ClassVar[str | None] = None  # the accounting's name for the documents it passes on ("survivors")
    removals_as: ClassVar[str | None] = None  # the accounting's name for its removals by reason ("filtered")
    # removal reason -> the table listing the documents it removed for it (doc_id, source, the evidence), which
    # explain and sample read; within-run duplicates are read from dedup's components instead
    removal_tables: ClassVar[Mapping[str, str]] = {}
    report_keys: ClassVar[tuple[str, ...]] = ()  # the report.json entries its report_html draws (not as a table)
    # the page's own section its report_html sections precede: "rejects" (right after the overview), "tokens",
    # "timeline" or "parameters" (pipeline.report.html.PLACES); stages placed alike keep run order
    report_before: ClassVar[str] = "rejects"
    stop_when_empty: ClassVar[bool] = False  # a run stops after it when it passes no document on

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        """Do the work: read ``inputs`` (one per name of ``reads``, and of ``optional_reads`` passed on), write the
        tables of ``passes`` and ``writes``, return the counts (JSON) its marker records.
        A missing third-party package raises its ImportError."""
        raise NotImplementedError(self.name)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        """The values of ``config_keys`` as the marker records them; a change makes resume refuse the output."""
        return {}

    def upgrade(self, values: dict[str, Any], version: int) -> dict[str, Any]:
        """Values a marker of an older ``version`` recorded, in this version's form (resume compares them)."""
        return values

    def applies(self, config: PipelineConfig) -> bool:
        """False: the run skips the stage (e.g. training-indices without a ``training`` section)."""
        return True

    def check_config(self, config: PipelineConfig) -> None:
        """Rules across config fields, before Spark starts; raise ConfigError naming the key."""

    def precheck(self, ctx: RunContext) -> None:
        """Checks that need the SparkSession but no job, made before any stage runs when this one will."""

    def outdated(self, ctx: RunContext, counts: dict[str, Any]) -> str | None:
        """Why finished outputs are out of date though the config is not (None: they are not)."""
        return None

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        """Its per-source documents, from its counts; a stage that keeps none enters no accounting."""
        return {}

    def after_run(
        self, ctx: RunContext, result: StageResult, log: Callable[[str], None], complete: bool
    ) -> dict[str, Any] | None:
        """Its last step once the stages asked for are done (``complete``: the run is complete and accounted
        for); what to add to manifest.json (None: nothing made)."""
        return None

    def report(self, run: str, counts: dict[str, Any]) -> dict[str, Any] | None:
        """Its entries of report.json, from the run directory and its recorded counts (None: none)."""
        return None

    def report_html(self, data: dict[str, Any]) -> list[str]:
        """Its sections of report.html, drawn from report.json's ``data`` alone (none by default)."""
        return []

    def report_charts(self, data: dict[str, Any]) -> list[str]:
        """Its charts (SVG) beside the run's token charts in report.html's Tokens and blend section, drawn from
        report.json's ``data`` alone (none by default)."""
        return []

    def result(self, counts: dict[str, Any]) -> StageResult:
        """The result of counts this stage returned now or recorded in its marker earlier."""
        return StageResult(self.name, counts, self.tally(counts))

    @property
    def accounted(self) -> bool:
        """Whether its per-source documents enter the accounting equation (it overrides :meth:`tally`)."""
        return type(self).tally is not Stage.tally

    def __repr__(self) -> str:
        return f"<stage {self.name}>"
