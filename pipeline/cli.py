"""Command line: ``python -m pipeline <stage|run|inspect> --config conf/local.yaml [--set k=v ...]``."""

from __future__ import annotations

import argparse
import json
import sys
import time

from pipeline.accounting import AccountingError
from pipeline.config import ConfigError, PipelineConfig, load_config
from pipeline.stages import STAGE_NAMES, StageError, run_stages


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", *STAGE_NAMES):
        p = sub.add_parser(name, help="every stage in order" if name == "run" else f"only the {name} stage")
        p.add_argument("--config", required=True, help="YAML config: local path, gs:// or s3://")
        p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="override a config value, e.g. --set dedup.threshold=0.8 (repeatable)")
        p.add_argument("--force", metavar="STAGE", choices=STAGE_NAMES,
                       help="recompute this stage and every stage after it (finished stages are reused)")
    p = sub.add_parser("inspect", help="counts, token histogram and decoded samples of a dataset prefix")
    p.add_argument("prefix", help="IndexedDataset prefix (without .bin/.idx)")
    p.add_argument("--tokenizer", help="directory with vocab.json and merges.txt to decode samples")
    p.add_argument("-n", "--samples", type=int, default=3)
    return parser


def prepare(config_path: str, overrides: list[str]) -> PipelineConfig:
    """Load, validate and check the inputs of a config; everything here happens before Spark starts."""
    from pipeline.ingest.splits import source_files
    from pipeline.preflight import check_paths

    try:
        config = load_config(config_path, overrides)
    except OSError as exc:  # missing, forbidden or unreachable config location
        raise ConfigError("--config", f"cannot read {config_path!r}: {type(exc).__name__}: {exc}") from None
    check_paths(config)  # storage answers (read-only probes) before any input is listed
    source_files(config)
    return config


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "inspect":
        from pipeline.inspect import inspect_main

        return inspect_main(args.prefix, args.tokenizer, args.samples)
    try:
        config = prepare(args.config, args.overrides)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from pipeline.context import RunContext

    ctx = RunContext(config)
    started = time.time()
    try:
        only = None if args.command == "run" else args.command
        results = run_stages(ctx, only=only, force=getattr(args, "force", None))
    except (StageError, AccountingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if only is not None:
        print(json.dumps(results.get(only, {}), indent=2, sort_keys=True, default=str))
    print(f"finished in {time.time() - started:.1f} s; outputs in {config.output}")
    return 0
