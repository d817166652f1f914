"""The runner: stage order, resume, forced recomputation, config-change refusal, end-of-run checks."""

from __future__ import annotations

import os
import time

from pipeline import storage
from pipeline.config import ConfigError, PipelineConfig
from pipeline.errors import PipelineError, one_line
from pipeline.logs import format_counts, run_progress, stage_jobs
from pipeline.report.publish import write_reports
from pipeline.run.accounting import account
from pipeline.run.manifest import Manifest, fingerprint, marker_path
from pipeline.run.registry import STAGES
from pipeline.run.stage_outputs import record as record_outputs
from pipeline.run.stage_outputs import verify as verify_outputs
from pipeline.secrets import redact_data
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, Stage, StageResult


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
    return redact_data(stage.config_values(config))


def stage_fingerprint(version: int, upstream: str, values: dict) -> str:
    """A stage's fingerprint: its config values in the form of ``version`` and the fingerprint of the stage before
    it. Version 1 is the form of runs made before stages had versions (no ``schema`` entry)."""
    schema = {} if version == 1 else {"schema": version}
    return fingerprint({**schema, "upstream": upstream, **values})


def _read_marker(ctx: RunContext, stage: str) -> dict | None:
    path = marker_path(ctx.run_dir, stage)
    return storage.read_json(path) if storage.exists(path) else None


def _recorded_match(stage: Stage, marker: dict, upstream: str, values: dict) -> tuple[bool, list[str], str]:
    """Whether a marker of an older version records the config ``values`` now give (after ``stage.upgrade``) on
    top of the same upstream; else the keys that differ, or one line saying why it cannot be compared."""
    version = marker.get("version", 1)
    if version > stage.version:
        return False, [], f"was finished by a newer version (config schema {version}; this one knows {stage.version})"
    if version == stage.version or "inputs" not in marker:
        return False, _changed_keys(marker.get("inputs", {}), values), ""
    recorded = marker["inputs"]
    if stage_fingerprint(version, upstream, recorded) != marker["fingerprint"]:
        return False, [], ""  # made on top of other upstream outputs
    upgraded = redact_data(stage.upgrade(recorded, version))
    return upgraded == values, _changed_keys(upgraded, values), ""


def _decide(
    stage: Stage, marker: dict | None, fp: str, upstream: str, values: dict, run_dir: str, forced: bool, wanted: bool
) -> str:
    """'run', 'reuse', or raise: a finished stage is reused unless forced; a changed one is refused."""
    if forced:
        return "run"
    if marker is None:
        if wanted:
            return "run"
        raise StageError(f"stage '{stage.name}' has not finished in {run_dir}; run it first")
    if marker["fingerprint"] == fp:
        return "reuse"
    same, changed, why = _recorded_match(stage, marker, upstream, values)
    if same:
        return "reuse"
    what = why or "finished with a different config (changed: {})".format(
        ", ".join(changed or ["an upstream stage's config"])
    )
    raise StageError(
        f"stage '{stage.name}' in {run_dir} {what}; "
        f"rerun with --force {stage.name} to recompute it and everything after it, or use a new output directory"
    )


def wiring(stages: tuple[Stage, ...], config: PipelineConfig) -> dict[str, dict[str, tuple[str, str]]]:
    """For each stage that applies: each name it reads -> (the latest earlier stage passing it, that table); a
    name of its ``optional_reads`` only when one does. Raises StageError, before any work, for a name of ``reads``
    no earlier stage passes on."""
    provided: dict[str, tuple[str, str]] = {}
    wired: dict[str, dict[str, tuple[str, str]]] = {}
    for stage in stages:
        if not stage.applies(config):
            continue
        for name in stage.reads:
            if name not in provided:
                raise StageError(f"stage '{stage.name}' reads {name!r}, which no stage before it passes on")
        wired[stage.name] = {name: provided[name] for name in (*stage.reads, *stage.optional_reads) if name in provided}
        provided.update({name: (stage.name, table) for name, table in stage.passes.items()})
    return wired


def run_stages(
    ctx: RunContext, only: str | None = None, force: str | None = None, log=None, stages: tuple[Stage, ...] = STAGES
) -> dict[str, StageResult]:
    """Run ``stages`` in order (``only``: that one, reusing the finished ones before it); returns each stage's result.

    Each stage gets the tables its ``reads`` name, from the stages before it (:func:`wiring`). A finished stage
    whose config (and upstream stages') is unchanged is reused; one whose config changed is refused. ``force``
    recomputes that stage and every later one. When every accounted stage's counts are known, the accounting
    equation is checked, the run report written, and each stage's ``after_run`` step made. Progress goes to
    ``log`` (by default the ``pipeline.run`` logger at INFO).
    """
    log = log or run_progress
    names = tuple(s.name for s in stages)
    if force is not None and force not in names:
        raise StageError(f"--force {force!r}: not a stage ({', '.join(names)})")
    last = names.index(only) if only else len(stages) - 1
    wired = wiring(stages[: last + 1], ctx.config)
    forced_from = names.index(force) if force else len(stages)
    for stage in stages[: last + 1]:  # checks that need Spark but no job: fail at start-up, not mid-run
        if (only is None or stage.name == only) and stage.applies(ctx.config):
            stage.precheck(ctx)
    manifest = Manifest(ctx.run_dir)
    upstream, recomputed, started_manifest = "", False, False
    fingerprints: dict[str, str] = {}
    results: dict[str, StageResult] = {}
    ran: set[str] = set()
    for index, stage in enumerate(stages[: last + 1]):
        if not stage.applies(ctx.config):
            continue
        values = stage_inputs(stage, ctx.config)
        fp = stage_fingerprint(stage.version, upstream, values)
        marker = _read_marker(ctx, stage.name)
        action = _decide(
            stage,
            marker,
            fp,
            upstream,
            values,
            ctx.run_dir,
            recomputed or index >= forced_from,
            wanted=only is None or index == last,
        )
        if action == "reuse":
            assert marker is not None  # reuse is only decided from a marker
            action = _check_reused(ctx, stage, marker, log)
        if action == "reuse" and marker is not None:
            log(f"[{stage.name}] already finished, reusing its outputs")
            results[stage.name], upstream = stage.result(marker.get("counts", {})), marker["fingerprint"]
            fingerprints[stage.name] = upstream
            _stop_if_nothing_left(stage, results[stage.name], index < last)
            continue
        if not started_manifest:  # the manifest describes the config of the outputs being written
            _check_writable(ctx, [s for s in stages[index : last + 1] if s.applies(ctx.config)])
            manifest.start(ctx.config)
            started_manifest = True
        wires = wired[stage.name].items()
        inputs = {name: Data(table, provider, results[provider].counts) for name, (provider, table) in wires}
        results[stage.name] = _run_one(ctx, manifest, stages, index, inputs, fp, values, log)
        upstream, recomputed = fp, True
        fingerprints[stage.name] = fp
        ran.add(stage.name)
        _stop_if_nothing_left(stage, results[stage.name], index < last)
    accounted = [s.name for s in stages if s.accounted and s.applies(ctx.config)]
    complete = bool(accounted) and set(accounted) <= set(results)
    if complete:
        _finish_run(ctx, manifest, stages, results, log)
    _after_run(ctx, manifest, stages, results, fingerprints, ran, complete, log)
    return results


def _check_writable(ctx: RunContext, stages: list[Stage]) -> None:
    """Refuse, before the first stage that runs, a directory it or a later stage must replace but cannot (a
    read-only stage directory left in the run directory, or a file where one goes): Spark would stop mid-run with
    its own error."""
    for stage in stages:
        for name in stage.writes:  # directories, every one
            path = ctx.path(*layout.parts(name))
            local = storage.local_path(path) if storage.is_local(path) else None
            if local is not None and os.path.lexists(local) and not os.path.isdir(local):
                raise ConfigError(
                    "output",
                    f"cannot write to {path!r} (stage '{stage.name}' writes a directory there): it is not a directory; "
                    "remove it or use another output directory",
                )
        for name in (*stage.writes, layout.marker(stage.name)):
            path = ctx.path(*layout.parts(name))
            blocked = storage.unwritable(path)
            if blocked is not None:
                raise ConfigError(
                    "output",
                    f"cannot write to {path!r} (stage '{stage.name}' replaces it): {blocked!r} is not writable; "
                    "make it writable or use another output directory",
                )


def _run_one(
    ctx: RunContext,
    manifest: Manifest,
    stages: tuple[Stage, ...],
    index: int,
    inputs: dict[str, Data],
    fp: str,
    values: dict,
    log,
) -> StageResult:
    """Run one stage on its inputs, then record its marker."""
    stage = stages[index]
    for later in stages[index:]:  # their outputs are about to be stale
        storage.remove(marker_path(ctx.run_dir, later.name))
    log(f"[{stage.name}] running")
    started = time.time()
    with stage_jobs(ctx, stage.name):
        result = stage.result(stage.run(ctx, inputs))
    seconds = round(time.time() - started, 3)
    info = {
        "fingerprint": fp,
        "version": stage.version,
        "inputs": values,
        "counts": result.counts,
        "seconds": seconds,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "outputs": record_outputs(ctx.run_dir, stage.writes),
    }
    storage.write_json(marker_path(ctx.run_dir, stage.name), info)
    manifest.record_stage(stage.name, {k: info[k] for k in ("fingerprint", "counts", "seconds", "finished")})
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
    problems = verify_outputs(ctx.run_dir, stage.writes, marker["outputs"])
    if not problems:
        return "reuse"
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    log(
        f"[{stage.name}] WARNING: its outputs changed since it finished: {'; '.join(problems[:3])}{more}; "
        "recomputing it and every later stage"
    )
    return "run"


def _stop_if_nothing_left(stage: Stage, result: StageResult, more_stages: bool) -> None:
    """Stop before later stages (a tokenizer trained on nothing) when a stage that may leave nothing did."""
    if not stage.stop_when_empty or not more_stages or not result.nothing_left():
        return
    removed = {reason: n for reason, n in result.removed().items() if n}
    why = (
        "removed " + ", ".join(f"{n} as {reason}" for reason, n in removed.items())
        if removed
        else "check the sources' paths, format and text_field"
    )
    raise StageError(
        f"no documents left after {stage.name} ({result.documents_read()} read; see rejects/ and manifest.json): "
        f"nothing to train a tokenizer on or to write; {why}"
    )


def _finish_run(
    ctx: RunContext, manifest: Manifest, stages: tuple[Stage, ...], results: dict[str, StageResult], log
) -> None:
    """Check the accounting equation (raises AccountingError), then write the report and summary."""
    manifest.data["accounting"] = account(stages, results)
    ran = [s for s in stages if s.name in results]
    reasons = [r for s in ran for t in results[s.name].sources.values() for r in t.removed]
    manifest.data["order"] = {
        "stages": [s.name for s in ran],
        "removed": list(dict.fromkeys(reasons)),
    }  # JSON sorts keys
    manifest.save()
    log("[accounting] every document read is rejected, removed for a reason, or written")
    log("[report] {} and {}".format(*write_reports(ctx.run_dir, stages)))


def _after_run(
    ctx: RunContext,
    manifest: Manifest,
    stages: tuple[Stage, ...],
    results: dict[str, StageResult],
    fingerprints: dict[str, str],
    ran: set[str],
    complete: bool,
    log,
) -> None:
    """Each finished stage's last step (the dedup index commit; ``complete``: the run is complete and accounted
    for, else the step may say why it waits). Made again for a stage that ran now; for a reused one only when
    the manifest does not record it for that output (a run killed before it), so never twice for one output."""
    made = manifest.data.setdefault("after_run", {})
    for stage in stages:
        if stage.name not in results:
            continue
        if stage.name not in ran and made.get(stage.name) == fingerprints[stage.name]:
            continue
        try:
            recorded = stage.after_run(ctx, results[stage.name], log, complete)
        except Exception as exc:
            _record_after_run_error(ctx, manifest, stages, stage.name, exc, complete, log)
            raise
        if recorded:  # a stage with no last step (or none for this config) records nothing
            manifest.data.update(recorded)
            made[stage.name] = fingerprints[stage.name]
            manifest.save()
        if manifest.data.get(layout.AFTER_RUN_ERRORS, {}).pop(stage.name, None) is not None:  # failed before
            manifest.save()
            if complete:  # the reports written before the step still said it failed
                write_reports(ctx.run_dir, stages)


def _record_after_run_error(
    ctx: RunContext, manifest: Manifest, stages: tuple[Stage, ...], name: str, exc: BaseException, complete: bool, log
) -> None:
    """Record in the manifest, and in the reports of a complete run (written before the step), that a stage's last
    step failed (a refused dedup index commit) and why; the error itself goes on to end the run."""
    line = one_line(exc) if isinstance(exc, PipelineError) else f"{type(exc).__name__}: {one_line(exc)}"
    manifest.data.setdefault(layout.AFTER_RUN_ERRORS, {})[name] = line
    manifest.data.get("after_run", {}).pop(name, None)  # not made for these outputs: the next run makes it again
    manifest.save()
    if complete:
        try:
            written = write_reports(ctx.run_dir, stages)
        except Exception as failure:  # noqa: BLE001 - the step's error is the one that ends the run
            log(f"[report] WARNING: not updated with the {name} stage's failed last step: {one_line(failure)}")
        else:
            log(f"[report] {written[0]} and {written[1]} updated: the {name} stage's last step failed")
