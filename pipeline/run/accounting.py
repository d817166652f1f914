"""The run's accounting equation (SPEC §3): every document read is rejected, removed, or written."""

from __future__ import annotations

from pipeline.errors import PipelineError
from pipeline.run.stage import StageResult


class AccountingError(PipelineError, RuntimeError):
    """Some documents are unaccounted for; the message lists the sources and figures."""


def account(ingest: StageResult, dedup: StageResult, merge_blend: StageResult) -> dict[str, dict]:
    """Per source: read, rejected, duplicates removed, survivors, written; raises if they don't add up."""
    table, problems = {}, []
    for name, read in ingest.sources.items():
        deduped, merged = dedup.sources[name], merge_blend.sources[name]
        row = {
            "documents_read": read.read,
            "rejected": read.rejected,
            "duplicates_removed": deduped.removed,
            "survivors": deduped.documents,
            "written": merged.documents,
        }
        if read.read != read.rejected + deduped.removed + deduped.documents:
            problems.append(f"{name}: read {read.read} != rejected {read.rejected} + "
                            f"removed {deduped.removed} + survivors {deduped.documents}")
        if deduped.documents != merged.documents:
            problems.append(f"{name}: {deduped.documents} survivors but {merged.documents} documents in megatron/")
        if deduped.read != deduped.removed + deduped.documents:
            problems.append(f"{name}: dedup read {deduped.read} != removed "
                            f"{deduped.removed} + survivors {deduped.documents}")
        if read.documents != deduped.read:
            problems.append(f"{name}: ingest wrote {read.documents} documents, "
                            f"dedup read {deduped.read}")
        table[name] = row
    if problems:
        raise AccountingError("documents unaccounted for: " + "; ".join(problems))
    return table
