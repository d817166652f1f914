"""The stages in run order, as :class:`~pipeline.run.stage.Stage` objects.

Each stage's Spark module is imported when the stage runs (so the command line, config checks and
``--help`` work without starting or even importing Spark); an ``ImportError`` there propagates as
is and the command line names the missing package.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pipeline.config import PipelineConfig
from pipeline.run.context import RunContext
from pipeline.run.stage import SourceTally, Stage

INGEST_SOURCE_FIELDS = ("name", "paths", "format", "text_field", "keep_fields", "text_unit")


def _ingest_inputs(cfg: PipelineConfig) -> dict:
    keys = INGEST_SOURCE_FIELDS
    return {"sources": [{k: getattr(s, k) for k in keys} for s in cfg.sources], "ingest": asdict(cfg.ingest)}


def _dedup_inputs(cfg: PipelineConfig) -> dict:
    dedup = asdict(cfg.dedup)
    if dedup["index"] is None:  # off: the fingerprint stays that of runs made before the key existed
        del dedup["index"]
    inputs = {"dedup": dedup, "priorities": {s.name: s.priority for s in cfg.sources}}
    if cfg.decontaminate.references:  # likewise: only runs that decontaminate record the section
        inputs["decontaminate"] = asdict(cfg.decontaminate)
    return inputs


def _dedup_outdated(ctx: RunContext, counts: dict[str, Any]) -> str | None:
    """The index runs the dedup would look up now differ from those it looked up (docs/dedup_index.md, Order):
    another run committed while this one was unfinished, or a rerun of it finds the index changed."""
    index = ctx.config.dedup.index
    if index is None or "index_runs" not in counts:  # no index, or a marker from before runs were recorded
        return None
    from pipeline.dedup.plan import DedupPlan
    from pipeline.dedup_index.lookup import run_key, runs_looked_up

    now = runs_looked_up(index, DedupPlan.from_config(ctx.config).lsh, run_key(ctx))
    gained = sorted(set(now) - set(counts["index_runs"]))
    lost = sorted(set(counts["index_runs"]) - set(now))
    changes = []
    if gained:
        changes.append(f"gained {len(gained)} run(s) since it ran ({', '.join(gained)})")
    if lost:
        changes.append(f"no longer holds {', '.join(lost)}")
    return f"the dedup index {index} " + "; ".join(changes) if changes else None


def _train_tokenizer_inputs(cfg: PipelineConfig) -> dict:
    return {"tokenizer": asdict(cfg.tokenizer)}


def _tokenize_inputs(cfg: PipelineConfig) -> dict:
    return {"tokenizer": asdict(cfg.tokenizer), "tokenize": asdict(cfg.tokenize)}


def _blend_inputs(cfg: PipelineConfig) -> dict:
    return {"blend": asdict(cfg.blend), "weights": {s.name: s.weight for s in cfg.sources}}


def _run_ingest(ctx: RunContext) -> dict[str, Any]:
    from pipeline.ingest.stage import run_ingest

    return run_ingest(ctx)


def _run_dedup(ctx: RunContext) -> dict[str, Any]:
    from pipeline.dedup.stage import run_dedup

    return run_dedup(ctx)


def _run_train_tokenizer(ctx: RunContext) -> dict[str, Any]:
    from pipeline.tokenizer.stage import run_train_tokenizer

    return run_train_tokenizer(ctx)


def _run_tokenize(ctx: RunContext) -> dict[str, Any]:
    from pipeline.tokenize.stage import run_tokenize

    return run_tokenize(ctx)


def _run_merge_blend(ctx: RunContext) -> dict[str, Any]:
    from pipeline.merge_blend.stage import run_merge_blend

    return run_merge_blend(ctx)


def _ingest_tally(counts: dict[str, Any]) -> dict[str, SourceTally]:
    return {
        name: SourceTally(documents=row["documents"], read=row["documents_read"], rejected=row["rejected"])
        for name, row in counts.get("sources", {}).items()
    }


def _dedup_tally(counts: dict[str, Any]) -> dict[str, SourceTally]:
    return {
        name: SourceTally(
            documents=row["survivors"],
            read=row["documents"],
            removed=row["duplicates_removed"],
            contaminated=row.get("contaminated"),
            earlier_runs=row.get("duplicates_of_earlier_runs"),
        )
        for name, row in counts.get("sources", {}).items()
    }


def _merge_tally(counts: dict[str, Any]) -> dict[str, SourceTally]:
    merged = counts.get("merge", {}).get("sources", {})
    return {name: SourceTally(documents=row["documents"] if row["published"] else 0) for name, row in merged.items()}


STAGES: tuple[Stage, ...] = (
    Stage(
        "ingest",
        (
            "sources[].name",
            "sources[].paths",
            "sources[].format",
            "sources[].text_field",
            "sources[].keep_fields",
            "sources[].text_unit",
            "ingest",
        ),
        _ingest_inputs,
        _run_ingest,
        _ingest_tally,
    ),
    Stage(
        "dedup",
        ("dedup", "decontaminate", "sources[].priority"),
        _dedup_inputs,
        _run_dedup,
        _dedup_tally,
        reads=("documents",),
        outdated=_dedup_outdated,
    ),
    Stage(
        "train-tokenizer",
        ("tokenizer",),
        _train_tokenizer_inputs,
        _run_train_tokenizer,
        applies=lambda config: config.tokenizer.train,
        reads=("dedup/survivors",),
    ),
    Stage("tokenize", ("tokenizer", "tokenize"), _tokenize_inputs, _run_tokenize, reads=("dedup/survivors",)),
    Stage("merge-blend", ("blend", "sources[].weight"), _blend_inputs, _run_merge_blend, _merge_tally),
)
STAGE_NAMES: tuple[str, ...] = tuple(s.name for s in STAGES)


def stage(name: str) -> Stage:
    """The stage called ``name``."""
    return STAGES[STAGE_NAMES.index(name)]
