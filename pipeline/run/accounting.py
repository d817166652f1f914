"""The run's accounting equation (docs/stages.md, Accounting): every document read is rejected, removed, or written.

Runs with decontamination or a dedup index have further removal terms, ``contaminated`` and
``duplicates_of_earlier_runs`` (docs/dedup_index.md, Accounting); runs without them keep the original equation.
"""

from __future__ import annotations

from pipeline.errors import PipelineError
from pipeline.run.stage import StageResult


class AccountingError(PipelineError, RuntimeError):
    """Some documents are unaccounted for; the message lists the sources and figures."""


def _figure(value: int | None, what: str) -> int:
    """A tally figure the equation needs; a stage that did not report it is an accounting failure."""
    if value is None:
        raise AccountingError(f"documents unaccounted for: {what} was not reported")
    return value


def account(ingest: StageResult, dedup: StageResult, merge_blend: StageResult) -> dict[str, dict]:
    """Per source: read, rejected, duplicates removed (and the other removals), survivors, written; raises if they
    don't add up."""
    table, problems = {}, []
    for name, read in ingest.sources.items():
        deduped, merged = dedup.sources[name], merge_blend.sources[name]
        read_total, rejected = _figure(read.read, f"{name}: ingest read"), _figure(read.rejected, f"{name}: rejected")
        removed, dedup_read = _figure(deduped.removed, f"{name}: removed"), _figure(deduped.read, f"{name}: dedup read")
        others = deduped.other_removals()
        row = {
            "documents_read": read.read,
            "rejected": read.rejected,
            "duplicates_removed": deduped.removed,
            **others,
            "survivors": deduped.documents,
            "written": merged.documents,
        }
        terms = "".join(f" + {key} {value}" for key, value in others.items())
        removed += sum(others.values())
        if read_total != rejected + removed + deduped.documents:
            problems.append(
                f"{name}: read {read.read} != rejected {read.rejected} + "
                f"removed {deduped.removed}{terms} + survivors {deduped.documents}"
            )
        if deduped.documents != merged.documents:
            problems.append(f"{name}: {deduped.documents} survivors but {merged.documents} documents in megatron/")
        if dedup_read != removed + deduped.documents:
            problems.append(
                f"{name}: dedup read {deduped.read} != removed {deduped.removed}{terms} + survivors {deduped.documents}"
            )
        if read.documents != deduped.read:
            problems.append(f"{name}: ingest wrote {read.documents} documents, dedup read {deduped.read}")
        table[name] = row
    if problems:
        raise AccountingError("documents unaccounted for: " + "; ".join(problems))
    return table
