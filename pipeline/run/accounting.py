"""The run's accounting equation (docs/stages.md, Accounting): every document read is rejected, removed for a
reason, or written.

Per source, over the stages that keep a tally (in run order): the first stage's records read equal the
rejects plus every removal plus the last stage's documents, and each stage starts from what the one
before it passed on (a stage that reports no ``read`` must pass on exactly that).
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.errors import PipelineError
from pipeline.stage_api.stage import SourceTally, Stage, StageResult


class AccountingError(PipelineError, RuntimeError):
    """Some documents are unaccounted for; the message lists the sources and figures."""


def _check_source(name: str, steps: list[tuple[Stage, SourceTally]]) -> list[str]:
    """Why one source's figures do not add up ([] when they do)."""
    problems: list[str] = []
    previous: tuple[Stage, SourceTally] | None = None
    for stage, tally in steps:
        documents = f"{stage.passes_on or 'documents'} {tally.documents}"
        if previous is not None:
            handed = previous[1].documents
            if tally.read is None and tally.documents != handed:
                before = previous[0].passes_on or f"documents after {previous[0].name}"
                problems.append(f"{name}: {handed} {before} but {tally.documents} documents in {stage.name}")
            elif tally.read is not None and tally.read != handed:
                problems.append(
                    f"{name}: {previous[0].name} passed on {handed} documents, {stage.name} read {tally.read}"
                )
        if tally.read is not None and tally.read != tally.rejected + sum(tally.removed.values()) + tally.documents:
            terms = ([f"rejected {tally.rejected}"] if tally.rejected else []) + [
                f"{reason} {count}" for reason, count in tally.removed.items()
            ]
            problems.append(f"{name}: {stage.name} read {tally.read} != {' + '.join([*terms, documents])}")
        previous = (stage, tally)
    return problems


def account(stages: Sequence[Stage], results: dict[str, StageResult]) -> dict[str, dict]:
    """Per source: ``documents_read``, ``rejected``, ``removed`` (by reason; each reason also as its own key),
    each accounted stage's documents under its ``passes_on`` name and its removals by reason under its
    ``removals_as`` name; raises if they don't add up."""
    accounted = [s for s in stages if s.accounted and s.name in results]
    if not accounted:
        return {}
    table: dict[str, dict] = {}
    problems: list[str] = []
    for name in results[accounted[0].name].sources:
        steps = []
        for stage in accounted:
            tally = results[stage.name].sources.get(name)
            if tally is None:
                problems.append(f"{name}: {stage.name} reported no figures")
                continue
            steps.append((stage, tally))
        problems += _check_source(name, steps)
        if not steps:
            continue
        removed: dict[str, int] = {}
        for _, tally in steps:
            for reason, count in tally.removed.items():
                removed[reason] = removed.get(reason, 0) + count
        first = steps[0][1]
        row: dict = {"documents_read": first.read, "rejected": sum(t.rejected for _, t in steps), **removed}
        row["removed"] = removed
        row.update({stage.passes_on: tally.documents for stage, tally in steps if stage.passes_on})
        row.update({stage.removals_as: dict(tally.removed) for stage, tally in steps if stage.removals_as})
        added = sum(tally.copies_added for _, tally in steps)
        if added:  # rehydration: written documents put back in the blend again (docs/blending.md)
            row["copies_added"] = added
        table[name] = row
    if problems:
        raise AccountingError("documents unaccounted for: " + "; ".join(problems))
    return table
