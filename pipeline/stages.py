"""The stage registry and the runner: order, resume, forced recomputation, config-change refusal."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from pipeline import storage
from pipeline.accounting import account
from pipeline.config import PipelineConfig
from pipeline.context import RunContext
from pipeline.errors import PipelineError, missing_dependency
from pipeline.logs import format_counts, run_progress, stage_jobs
from pipeline.manifest import fingerprint, marker_path
from pipeline.report.publish import write_reports
from pipeline.secrets import redact_data
from pipeline.stage_outputs import record as record_outputs
from pipeline.stage_outputs import verify as verify_outputs


class StageError(PipelineError, RuntimeError):
    """A stage cannot run or cannot be reused; the message says why and what to do."""


def _ingest_inputs(cfg: PipelineConfig) -> dict:
    keys = ("name", "paths", "format", "text_field", "keep_fields", "text_unit")
    return {"sources": [{k: getattr(s, k) for k in keys} for s in cfg.sources], "ingest": asdict(cfg.ingest)}


def _dedup_inputs(cfg: PipelineConfig) -> dict:
    return {"dedup": asdict(cfg.dedup), "priorities": {s.name: s.priority for s in cfg.sources}}


def _blend_inputs(cfg: PipelineConfig) -> dict:
    return {"blend": asdict(cfg.blend), "weights": {s.name: s.weight for s in cfg.sources}}


@dataclass(frozen=True)
class Stage:
    """A named step, the config its output depends on, and where its code lives."""

    name: str
    inputs: Callable[[PipelineConfig], dict]  # the config values that shape this stage's output
    target: str  # "module:function", imported only when the stage runs

    def function(self) -> Callable[[RunContext], dict]:
        module, func = self.target.split(":")
        try:
            return getattr(importlib.import_module(module), func)
        except ImportError as exc:
            missing = missing_dependency(exc)  # a third-party package, not this stage's own code
            if missing is not None:
                raise missing from None
            raise StageError(f"stage '{self.name}' is not built yet ({self.target} is missing)") from None
        except AttributeError:
            raise StageError(f"stage '{self.name}' is not built yet ({self.target} is missing)") from None


STAGES: tuple[Stage, ...] = (
    Stage("ingest", _ingest_inputs, "pipeline.ingest.stage:run_ingest"),
    Stage("dedup", _dedup_inputs, "pipeline.dedup.stage:run_dedup"),
    Stage("train-tokenizer", lambda c: {"tokenizer": asdict(c.tokenizer)},
          "pipeline.tokenizer.stage:run_train_tokenizer"),
    Stage("tokenize", lambda c: {"tokenizer": asdict(c.tokenizer), "tokenize": asdict(c.tokenize)},
          "pipeline.megatron.tokenize_stage:run_tokenize"),
    Stage("merge-blend", _blend_inputs, "pipeline.blend.stage:run_merge_blend"),
)
STAGE_NAMES = tuple(s.name for s in STAGES)


def _applies(stage: Stage, ctx: RunContext) -> bool:
    return stage.name != "train-tokenizer" or ctx.config.tokenizer.train


def _changed_keys(old, new, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two nested dict/list structures."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [k for key in sorted(set(old) | set(new))
                for k in _changed_keys(old.get(key), new.get(key), f"{prefix}{key}.")]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [k for i, (a, b) in enumerate(zip(old, new, strict=True)) for k in _changed_keys(a, b, f"{prefix}{i}.")]
    return [] if old == new else [prefix.rstrip(".")]


def stage_inputs(stage: Stage, config: PipelineConfig) -> dict:
    """The config values that shape ``stage``'s output, as its marker records them (URL passwords redacted)."""
    return redact_data(stage.inputs(config))


def _read_marker(ctx: RunContext, stage: str) -> dict | None:
    path = marker_path(ctx.run_dir, stage)
    return storage.read_json(path) if storage.exists(path) else None


def _decide(stage: Stage, marker: dict | None, fp: str, inputs: dict, run_dir: str,
            forced: bool, wanted: bool) -> str:
    """'run', 'reuse', or raise: a finished stage is reused unless forced; a changed one is refused."""
    if forced:
        return "run"
    if marker is None:
        if wanted:
            return "run"
        raise StageError(f"stage '{stage.name}' has not finished in {run_dir}; run it first")
    if marker["fingerprint"] == fp:
        return "reuse"
    changed = _changed_keys(marker.get("inputs", {}), inputs) or ["an upstream stage's config"]
    raise StageError(
        f"stage '{stage.name}' in {run_dir} finished with a different config (changed: {', '.join(changed)}); "
        f"rerun with --force {stage.name} to recompute it and everything after it, or use a new output directory")


def run_stages(ctx: RunContext, only: str | None = None, force: str | None = None, log=None) -> dict:
    """Run the stages in order (``only``: up to and including that one); returns counts per stage.

    A finished stage whose config (and upstream stages') is unchanged is reused; one whose config
    changed is refused. ``force`` recomputes that stage and every later one. When the last stage's
    counts are known, the accounting equation is checked and the run report written. Progress goes to
    ``log`` (by default the ``pipeline.run`` logger at INFO).
    """
    log = log or run_progress
    if force is not None and force not in STAGE_NAMES:
        raise StageError(f"--force {force!r}: not a stage ({', '.join(STAGE_NAMES)})")
    last = STAGE_NAMES.index(only) if only else len(STAGES) - 1
    forced_from = STAGE_NAMES.index(force) if force else len(STAGES)
    _precheck(ctx, only)
    upstream, results, recomputed, started_manifest = "", {}, False, False
    for index, stage in enumerate(STAGES[: last + 1]):
        if not _applies(stage, ctx):
            continue
        inputs = stage_inputs(stage, ctx.config)
        fp = fingerprint({"upstream": upstream, **inputs})
        marker = _read_marker(ctx, stage.name)
        action = _decide(stage, marker, fp, inputs, ctx.run_dir, recomputed or index >= forced_from,
                         wanted=only is None or index == last)
        if action == "reuse":
            action = _check_reused(ctx, stage, marker, log)
        if action == "reuse":
            log(f"[{stage.name}] already finished, reusing its outputs")
            results[stage.name], upstream = marker.get("counts", {}), fp
            _stop_if_nothing_left(stage.name, results[stage.name], index < last)
            continue
        if not started_manifest:  # the manifest describes the config of the outputs being written
            ctx.manifest.start(ctx.config)
            started_manifest = True
        results[stage.name] = _run_one(ctx, index, stage, fp, inputs, log)
        upstream, recomputed = fp, True
        _stop_if_nothing_left(stage.name, results[stage.name], index < last)
    if {"ingest", "dedup", "merge-blend"} <= set(results):
        _finish_run(ctx, results, log)
    return results


def _run_one(ctx: RunContext, index: int, stage: Stage, fp: str, inputs: dict, log) -> dict:
    """Run one stage, then record its marker (after its tables reached the run directory)."""
    func = stage.function()
    _invalidate_from(ctx, index)
    log(f"[{stage.name}] running")
    started = time.time()
    with stage_jobs(ctx, stage.name):
        counts = func(ctx)
    ctx.tables.sync()  # staged Parquet tables reach the run directory before the marker
    seconds = round(time.time() - started, 3)
    info = {"fingerprint": fp, "inputs": inputs, "counts": counts, "seconds": seconds,
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "outputs": record_outputs(ctx.run_dir, stage.name)}
    storage.write_json(marker_path(ctx.run_dir, stage.name), info)
    ctx.manifest.record_stage(stage.name, {k: info[k] for k in ("fingerprint", "counts", "seconds", "finished")})
    detail = format_counts(counts) if isinstance(counts, dict) else ""
    log(f"[{stage.name}] done in {seconds:.1f} s" + (f" ({detail})" if detail else ""))
    return counts


def _check_reused(ctx: RunContext, stage: Stage, marker: dict, log) -> str:
    """'reuse' when the stage's files still match its marker; else 'run' (logged, naming the files)."""
    if "outputs" not in marker:
        log(f"[{stage.name}] WARNING: its marker records no file list (written by an older version): "
            "reused without verification")
        return "reuse"
    problems = verify_outputs(ctx.run_dir, stage.name, marker["outputs"])
    if not problems:
        return "reuse"
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    log(f"[{stage.name}] WARNING: its outputs changed since it finished: {'; '.join(problems[:3])}{more}; "
        "recomputing it and every later stage")
    return "run"


def _stop_if_nothing_left(stage: str, counts: dict, more_stages: bool) -> None:
    """Stop before later stages (a tokenizer trained on nothing) when ingest or dedup left no document."""
    if stage not in ("ingest", "dedup") or not more_stages:
        return
    sources = counts.get("sources", {})
    key = "documents" if stage == "ingest" else "survivors"
    if sources and all(int(row.get(key, 0)) == 0 for row in sources.values()):
        read = sum(int(row.get("documents_read", row.get("documents", 0))) for row in sources.values())
        raise StageError(f"no documents left after {stage} ({read} read; see rejects/ and manifest.json): "
                         "nothing to train a tokenizer on or to write; check the sources' paths, format and "
                         "text_field")


def _finish_run(ctx: RunContext, results: dict, log) -> None:
    """Check the accounting equation (raises AccountingError), then write the report and summary."""
    ctx.manifest.data["accounting"] = account(results)
    ctx.manifest.save()
    log("[accounting] every document read is rejected, removed as a duplicate, or written")
    log("[report] {} and {}".format(*write_reports(ctx.run_dir)))


def _precheck(ctx: RunContext, only: str | None) -> None:
    """Checks that need the SparkSession but no Spark job: fail at start-up, not mid-run."""
    if ctx.config.dedup.engine == "graphframes" and only in (None, "dedup"):
        from pipeline.dedup.graphframes_engine import require_graphframes

        require_graphframes(ctx.spark)


def _invalidate_from(ctx: RunContext, index: int) -> None:
    """Remove the markers of a stage and every later one: their outputs are about to be stale."""
    for stage in STAGES[index:]:
        storage.remove(marker_path(ctx.run_dir, stage.name))
