"""The stage registry and the runner: order, resume, forced recomputation, config-change refusal."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from pipeline import storage
from pipeline.accounting import account
from pipeline.context import RunContext
from pipeline.manifest import fingerprint, marker_path
from pipeline.run_report import summary_text, write_html


class StageError(RuntimeError):
    """A stage cannot run or cannot be reused; the message says why and what to do."""


@dataclass(frozen=True)
class Stage:
    """A named step, the config sections its output depends on, and where its code lives."""

    name: str
    sections: tuple[str, ...]
    target: str  # "module:function", imported only when the stage runs

    def function(self) -> Callable[[RunContext], dict]:
        module, func = self.target.split(":")
        try:
            return getattr(importlib.import_module(module), func)
        except (ImportError, AttributeError):
            raise StageError(f"stage '{self.name}' is not built yet ({self.target} is missing)") from None


STAGES: tuple[Stage, ...] = (
    Stage("ingest", ("sources", "ingest"), "pipeline.ingest.stage:run_ingest"),
    Stage("dedup", ("dedup",), "pipeline.dedup.stage:run_dedup"),
    Stage("train-tokenizer", ("tokenizer",), "pipeline.tokenizer.stage:run_train_tokenizer"),
    Stage("tokenize", ("tokenizer", "tokenize"), "pipeline.megatron.stage:run_tokenize"),
    Stage("merge-blend", ("blend",), "pipeline.blend.stage:run_merge_blend"),
)
STAGE_NAMES = tuple(s.name for s in STAGES)


def _applies(stage: Stage, ctx: RunContext) -> bool:
    return stage.name != "train-tokenizer" or ctx.config.tokenizer.train


def _sections(stage: Stage, ctx: RunContext) -> dict:
    cfg = asdict(ctx.config)
    return {name: cfg[name] for name in stage.sections}


def _changed_keys(old: dict, new: dict, prefix: str = "") -> list[str]:
    keys = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            keys += _changed_keys(a, b, f"{prefix}{key}.")
        elif a != b:
            keys.append(f"{prefix}{key}")
    return keys


def _read_marker(ctx: RunContext, stage: str) -> dict | None:
    path = marker_path(ctx.run_dir, stage)
    return storage.read_json(path) if storage.exists(path) else None


def run_stages(ctx: RunContext, only: str | None = None, force: str | None = None, log=print) -> dict:
    """Run every stage in order (``only`` runs one, recomputing it); returns counts per stage.

    A finished stage whose config sections (or an upstream stage's) are unchanged is skipped; one
    whose config changed is refused unless ``force`` names it or an earlier stage.
    """
    if force is not None and force not in STAGE_NAMES:
        raise StageError(f"--force {force!r}: not a stage ({', '.join(STAGE_NAMES)})")
    forced_from = STAGE_NAMES.index(force) if force else len(STAGES)
    _precheck(ctx, only)
    upstream, results, recomputed = "", {}, False
    for index, stage in enumerate(STAGES):
        if not _applies(stage, ctx):
            continue
        sections = _sections(stage, ctx)
        print_name = f"[{stage.name}]"
        fp = fingerprint({"upstream": upstream, **sections})
        marker = _read_marker(ctx, stage.name)
        wanted = only is None or only == stage.name
        if only is not None and STAGE_NAMES.index(only) < index:
            break
        must_run = wanted and (recomputed or index >= forced_from or only == stage.name or marker is None)
        if not must_run and marker is not None and marker["fingerprint"] != fp:
            changed = _changed_keys(marker.get("sections", {}), sections) or ["an upstream stage"]
            raise StageError(
                f"stage '{stage.name}' in {ctx.run_dir} finished with a different config "
                f"(changed: {', '.join(changed)}); rerun with --force {stage.name} to recompute it "
                "and everything after it, or use a new output directory")
        if not must_run:
            if marker is None:
                raise StageError(f"stage '{stage.name}' has not finished in {ctx.run_dir}; run it first")
            log(f"{print_name} already finished, reusing its outputs")
            results[stage.name] = marker.get("counts", {})
            upstream = fp
            continue
        func = stage.function()
        _invalidate_from(ctx, index)
        log(f"{print_name} running")
        started = time.time()
        counts = func(ctx)
        ctx.tables.sync()  # staged Parquet tables reach the run directory before the marker
        seconds = round(time.time() - started, 3)
        info = {"fingerprint": fp, "sections": sections, "counts": counts, "seconds": seconds,
                "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        storage.write_json(marker_path(ctx.run_dir, stage.name), info)
        ctx.manifest.record_stage(stage.name, {k: info[k] for k in ("fingerprint", "counts", "seconds", "finished")})
        log(f"{print_name} done in {seconds:.1f} s")
        results[stage.name] = counts
        upstream, recomputed = fp, True
    if only is None:
        table = account(results)
        ctx.manifest.data["accounting"] = table
        ctx.manifest.save()
        log("[accounting] every document read is rejected, removed as a duplicate, or written")
        log(f"[report] {write_html(ctx)}")
        log(summary_text(ctx.manifest.data))
    return results


def _precheck(ctx: RunContext, only: str | None) -> None:
    """Checks that need the SparkSession but no Spark job: fail at start-up, not mid-run."""
    if ctx.config.dedup.engine == "graphframes" and only in (None, "dedup"):
        from pipeline.dedup.graphframes_engine import require_graphframes

        require_graphframes(ctx.spark)


def _invalidate_from(ctx: RunContext, index: int) -> None:
    """Remove the markers of a stage and every later one: their outputs are about to be stale."""
    for stage in STAGES[index:]:
        storage.remove(marker_path(ctx.run_dir, stage.name))
