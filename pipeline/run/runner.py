"""The runner: stage order, resume, forced recomputation, config-change refusal, end-of-run checks."""

from __future__ import annotations

import time

from pipeline import storage
from pipeline.config import PipelineConfig
from pipeline.errors import PipelineError
from pipeline.logs import format_counts, run_progress, stage_jobs
from pipeline.report.publish import write_reports
from pipeline.run.accounting import account
from pipeline.run.context import RunContext
from pipeline.run.manifest import fingerprint, marker_path
from pipeline.run.registry import STAGE_NAMES, STAGES
from pipeline.run.stage import Stage, StageResult
from pipeline.run.stage_outputs import record as record_outputs
from pipeline.run.stage_outputs import verify as verify_outputs
from pipeline.secrets import redact_data


class StageError(PipelineError, RuntimeError):
    """A stage cannot run or cannot be reused; the message says why and what to do."""


def _changed_keys(old, new, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two nested dict/list structures."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            k
            for key in sorted(set(old) | set(new))
            for k in _changed_keys(old.get(key), new.get(key), f"{prefix}{key}.")
        ]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [k for i, (a, b) in enumerate(zip(old, new, strict=True)) for k in _changed_keys(a, b, f"{prefix}{i}.")]
    return [] if old == new else [prefix.rstrip(".")]


def stage_inputs(stage: Stage, config: PipelineConfig) -> dict:
    """The config values that shape ``stage``'s output, as its marker records them (URL passwords redacted)."""
    return redact_data(stage.inputs(config))


def _read_marker(ctx: RunContext, stage: str) -> dict | None:
    path = marker_path(ctx.run_dir, stage)
    return storage.read_json(path) if storage.exists(path) else None


def _decide(stage: Stage, marker: dict | None, fp: str, inputs: dict, run_dir: str, forced: bool, wanted: bool) -> str:
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
        f"rerun with --force {stage.name} to recompute it and everything after it, or use a new output directory"
    )


def run_stages(ctx: RunContext, only: str | None = None, force: str | None = None, log=None) -> dict[str, StageResult]:
    """Run the stages in order (``only``: up to and including that one); returns each stage's result.

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
    upstream, recomputed, started_manifest = "", False, False
    results: dict[str, StageResult] = {}
    for index, stage in enumerate(STAGES[: last + 1]):
        if not stage.applies(ctx.config):
            continue
        inputs = stage_inputs(stage, ctx.config)
        fp = fingerprint({"upstream": upstream, **inputs})
        marker = _read_marker(ctx, stage.name)
        action = _decide(
            stage,
            marker,
            fp,
            inputs,
            ctx.run_dir,
            recomputed or index >= forced_from,
            wanted=only is None or index == last,
        )
        if action == "reuse":
            assert marker is not None  # reuse is only decided from a marker
            action = _check_reused(ctx, stage, marker, log)
        if action == "reuse" and marker is not None:
            log(f"[{stage.name}] already finished, reusing its outputs")
            results[stage.name], upstream = stage.result(marker.get("counts", {})), fp
            _stop_if_nothing_left(results[stage.name], index < last)
            continue
        if not started_manifest:  # the manifest describes the config of the outputs being written
            ctx.manifest.start(ctx.config)
            started_manifest = True
        results[stage.name] = _run_one(ctx, index, stage, fp, inputs, log)
        upstream, recomputed = fp, True
        _stop_if_nothing_left(results[stage.name], index < last)
    if {"ingest", "dedup", "merge-blend"} <= set(results):
        _finish_run(ctx, results, log)
        if ctx.config.dedup.index:  # the run is complete and accounted for: its survivors join the index
            _commit_index(ctx, log)
    return results


def _commit_index(ctx: RunContext, log) -> None:
    """Add the finished run's documents to ``dedup.index`` (docs/dedup_index.md, Commit) and record it."""
    from pipeline.dedup_index.commit import commit_run

    done = commit_run(ctx)
    ctx.manifest.data["dedup_index"] = done
    ctx.manifest.save()
    log(
        f"[index] {done['documents']} documents ({done['kept']} kept) committed to {done['index']} "
        f"(generation {done['generation']})"
    )


def _run_one(ctx: RunContext, index: int, stage: Stage, fp: str, inputs: dict, log) -> StageResult:
    """Run one stage, then record its marker (after its tables reached the run directory)."""
    _invalidate_from(ctx, index)
    log(f"[{stage.name}] running")
    started = time.time()
    with stage_jobs(ctx, stage.name):
        result = stage.run(ctx)
    ctx.tables.sync()  # staged Parquet tables reach the run directory before the marker
    seconds = round(time.time() - started, 3)
    info = {
        "fingerprint": fp,
        "inputs": inputs,
        "counts": result.counts,
        "seconds": seconds,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "outputs": record_outputs(ctx.run_dir, stage.name),
    }
    storage.write_json(marker_path(ctx.run_dir, stage.name), info)
    ctx.manifest.record_stage(stage.name, {k: info[k] for k in ("fingerprint", "counts", "seconds", "finished")})
    detail = format_counts(result.counts) if isinstance(result.counts, dict) else ""
    log(f"[{stage.name}] done in {seconds:.1f} s" + (f" ({detail})" if detail else ""))
    return result


def _check_reused(ctx: RunContext, stage: Stage, marker: dict, log) -> str:
    """'reuse' when the stage's files still match its marker and are not out of date; else 'run' (logged, saying
    why)."""
    why = stage.outdated(ctx, marker.get("counts", {}))
    if why:
        log(f"[{stage.name}] {why}: recomputing it and every later stage")
        return "run"
    if "outputs" not in marker:
        log(
            f"[{stage.name}] WARNING: its marker records no file list (written by an older version): "
            "reused without verification"
        )
        return "reuse"
    problems = verify_outputs(ctx.run_dir, stage.name, marker["outputs"])
    if not problems:
        return "reuse"
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    log(
        f"[{stage.name}] WARNING: its outputs changed since it finished: {'; '.join(problems[:3])}{more}; "
        "recomputing it and every later stage"
    )
    return "run"


def _stop_if_nothing_left(result: StageResult, more_stages: bool) -> None:
    """Stop before later stages (a tokenizer trained on nothing) when ingest or dedup left no document."""
    if result.stage not in ("ingest", "dedup") or not more_stages:
        return
    if result.nothing_left():
        read = result.documents_read()
        raise StageError(
            f"no documents left after {result.stage} ({read} read; see rejects/ and manifest.json): "
            "nothing to train a tokenizer on or to write; check the sources' paths, format and "
            "text_field"
        )


def _finish_run(ctx: RunContext, results: dict[str, StageResult], log) -> None:
    """Check the accounting equation (raises AccountingError), then write the report and summary."""
    ctx.manifest.data["accounting"] = account(results["ingest"], results["dedup"], results["merge-blend"])
    ctx.manifest.save()
    log("[accounting] every document read is rejected, removed as a duplicate, or written")
    log("[report] {} and {}".format(*write_reports(ctx.run_dir)))


def _precheck(ctx: RunContext, only: str | None) -> None:
    """Checks that need the SparkSession but no Spark job: fail at start-up, not mid-run."""
    if ctx.config.dedup.engine == "graphframes" and only in (None, "dedup"):
        from pipeline.dedup.graphframes_engine import require_graphframes

        require_graphframes(ctx.spark)
    if ctx.config.dedup.index and only in (None, "dedup"):  # other MinHash parameters: refused before any work
        from pipeline.dedup.plan import DedupPlan
        from pipeline.dedup_index.lookup import require_index_usable

        require_index_usable(ctx.config.dedup.index, DedupPlan.from_config(ctx.config).lsh)


def _invalidate_from(ctx: RunContext, index: int) -> None:
    """Remove the markers of a stage and every later one: their outputs are about to be stale."""
    for stage in STAGES[index:]:
        storage.remove(marker_path(ctx.run_dir, stage.name))
