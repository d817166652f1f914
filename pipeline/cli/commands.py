"""Command line: ``python -m pipeline <stage|run|inspect> --config conf/local.yaml [--set k=v ...]``."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
import time
import traceback

from pipeline.cli.index import index_main
from pipeline.cli.inspect import inspect_main
from pipeline.cli.report import COMMANDS as REPORT_COMMANDS
from pipeline.cli.report import add_commands as add_report_commands
from pipeline.cli.report import run_command as run_report_command
from pipeline.config import ConfigError, PipelineConfig, load_config
from pipeline.errors import PipelineError, UsageError, missing_dependency, one_line
from pipeline.ingest.stage import source_files
from pipeline.logs import LEVELS, LOG_LEVEL_ENV, configure_logging
from pipeline.report.summary import summary_text
from pipeline.run.manifest import Manifest
from pipeline.run.preflight import check_paths, check_stage_configs
from pipeline.run.registry import STAGE_NAMES, STAGES
from pipeline.run.runlock import RunLock
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", *STAGE_NAMES):
        p = sub.add_parser(name, help="every stage in order" if name == "run" else f"only the {name} stage")
        p.add_argument("--config", required=True, help="YAML config: local path, gs:// or s3://")
        p.add_argument(
            "--set",
            dest="overrides",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override a config value, e.g. --set dedup.threshold=0.8 (repeatable)",
        )
        p.add_argument(
            "--force",
            metavar="STAGE",
            choices=STAGE_NAMES,
            help="recompute this stage and every stage after it (finished stages are reused)",
        )
        p.add_argument(
            "--break-lock",
            action="store_true",
            help="take over the output's run lock on gs:// or s3:// even if its holder looks alive",
        )
        p.add_argument("--debug", action="store_true", help="print the traceback of an error (or PIPELINE_DEBUG=1)")
        if name != "run":
            p.add_argument(
                "--if-on",
                action="store_true",
                help="a stage the config turns off is a note and exit 0, not an error (what jobs/job_<stage>.py pass)",
            )
        add_log_level(p)
    p = sub.add_parser("inspect", help="counts, token histogram and decoded samples of a dataset prefix")
    p.add_argument("prefix", help="IndexedDataset prefix (without .bin/.idx)")
    p.add_argument(
        "--tokenizer",
        help="decode samples with: a directory with vocab.json and merges.txt, or a .tiktoken, tokenizer.json or "
        "SentencePiece .model file",
    )
    p.add_argument("--config", help="decode samples with this run config's tokenizer (any tokenizer.kind)")
    p.add_argument("-n", "--samples", type=int, default=3)
    add_report_commands(sub, add_log_level)
    p = sub.add_parser("index", help="a dedup index: describe it, or compact its generations into few files")
    p.add_argument("action", choices=("describe", "compact"))
    p.add_argument("path", help="the index (dedup.index): local path, gs:// or s3://")
    p.add_argument("--debug", action="store_true", help="print the traceback of an error (or PIPELINE_DEBUG=1)")
    add_log_level(p)
    return parser


def add_log_level(parser: argparse.ArgumentParser) -> None:
    """``--log-level``: what the ``pipeline`` logger writes to stderr (default INFO, or $PIPELINE_LOG_LEVEL)."""
    parser.add_argument(
        "--log-level",
        type=str.upper,
        choices=LEVELS,
        help="progress and warnings on stderr: DEBUG, INFO (default), WARNING or ERROR; or PIPELINE_LOG_LEVEL",
    )


def prepare(config_path: str, overrides: list[str]) -> PipelineConfig:
    """Load, validate and check the inputs of a config; everything here happens before Spark starts."""
    try:
        config = load_config(config_path, overrides)
    except OSError as exc:  # missing, forbidden or unreachable config location
        raise ConfigError("--config", f"cannot read {config_path!r}: {type(exc).__name__}: {exc}") from None
    check_stage_configs(config)  # each stage's rules that span config fields
    check_paths(config)  # storage answers (read-only probes) before any input is listed
    source_files(config)
    return config


def main(argv: list[str] | None = None) -> int:
    """Run a command; an error that stops it is one line on stderr and exit code 2 (usage, config) or 1."""
    args = build_parser().parse_args(argv)
    debug = getattr(args, "debug", False) or os.environ.get("PIPELINE_DEBUG", "") not in ("", "0")
    try:
        try:
            configure_logging(getattr(args, "log_level", None))
        except ValueError as exc:  # a bad PIPELINE_LOG_LEVEL is a one-line usage error like any other
            raise ConfigError(LOG_LEVEL_ENV, str(exc)) from None
        return _dispatch(args)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - every error ends here, as one line
        if debug:
            traceback.print_exc()
        line, code = describe(exc)
        hint = "" if debug or isinstance(exc, PipelineError) else " (--debug or PIPELINE_DEBUG=1 prints the traceback)"
        print(f"error: {line}{hint}", file=sys.stderr)
        return code


# a pipeline error raised in a Spark task, as its Python traceback's last line inside the driver's Spark error
WORKER_ERROR = re.compile(r"^(pipeline(?:\.\w+)*)\.(\w+): (.+)$", re.MULTILINE)
# Spark's own error when an overwrite cannot delete the table it replaces (a read-only directory)
UNCLEARED = re.compile(r"Unable to clear output directory (\S+) prior to writing to it")


def _worker_exit_code(module: str, name: str) -> int:
    """The exit code of the pipeline error class ``module.name`` a task raised (2 for a config or usage error)."""
    try:
        raised = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return 1
    return raised.exit_code if isinstance(raised, type) and issubclass(raised, PipelineError) else 1


def describe(exc: BaseException) -> tuple[str, int]:
    """One line naming the cause, and the exit code, for any exception that stopped a run. A Spark error is
    reduced to its cause when it is known: a pipeline error a task raised, or a table Spark could not replace."""
    if isinstance(exc, ImportError):
        exc = missing_dependency(exc) or exc
    if isinstance(exc, PipelineError):
        return one_line(exc), exc.exit_code
    text = str(exc)
    raised = WORKER_ERROR.search(text)
    if raised:
        return one_line(PipelineError(raised.group(3))), _worker_exit_code(raised.group(1), raised.group(2))
    uncleared = UNCLEARED.search(text)
    if uncleared:
        where = uncleared.group(1).removeprefix("file:")
        return (
            f"cannot write to {where}: Spark could not delete what it holds (a read-only directory or file in "
            "it?); make it writable or use another output directory",
            1,
        )
    return f"{type(exc).__name__}: {one_line(exc)}", 1


def check_stage_on(config: PipelineConfig, name: str) -> None:
    """Refuse a one-stage command whose stage the config turns off (it would run the stages before it and then
    nothing); a usage error, exit code 2."""
    stage = next(s for s in STAGES if s.name == name)
    if not stage.applies(config):
        raise UsageError(
            f"the {name} stage is off in this config (its section '{stage.config_keys[0]}' does not turn it on; "
            "docs/stages.md): nothing to run"
        )


def _dispatch(args: argparse.Namespace) -> int:
    if args.command in REPORT_COMMANDS:
        return run_report_command(args)
    if args.command == "inspect":
        return inspect_main(args.prefix, args.tokenizer, args.samples, args.config)
    if args.command == "index":
        return index_main(args.action, args.path)
    config = prepare(args.config, args.overrides)
    started = time.time()
    only = None if args.command == "run" else args.command
    if only is not None:
        try:
            check_stage_on(config, only)
        except UsageError as off:
            if not args.if_on:
                raise
            print(f"{only}: {off}", flush=True)
            return 0
    lock = RunLock(config.output, args.command)
    lock.acquire(break_lock=args.break_lock)
    try:  # released on success and on failure; a killed process's lock is handled by the next run
        ctx = RunContext(config)
        results = run_stages(ctx, only=only, force=getattr(args, "force", None))
    finally:
        lock.release()
    manifest = Manifest(config.output).data
    if only in (None, STAGE_NAMES[-1]) and "accounting" in manifest:  # the run is complete
        print(summary_text(manifest))
    if only is not None:
        print(json.dumps(results[only].counts if only in results else {}, indent=2, sort_keys=True, default=str))
    print(f"finished in {time.time() - started:.1f} s; outputs in {config.output}")
    return 0
