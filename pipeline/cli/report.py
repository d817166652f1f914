"""Commands on a finished run: ``report RUN [--json]``, ``explain RUN DOC_ID``, ``sample RUN --removed N``,
``sample RUN --filtered [RULE]``, ``signals RUN --where COND -n N``."""

from __future__ import annotations

import argparse
import json
import sys

from pipeline import storage
from pipeline.cli.explain import ExplainError, explain, format_explanation, format_sample, sample
from pipeline.cli.signals import format_signals, parse_where, sample_signals
from pipeline.report.data import build_report_data
from pipeline.report.publish import write_reports
from pipeline.report.summary import summary_text
from pipeline.run.registry import STAGES
from pipeline.spans.explain_spans import format_spans_sample, sample_spans
from pipeline.stage_api import layout

COMMANDS = ("report", "explain", "sample", "signals")


def add_commands(sub, add_log_level) -> None:
    """Register the commands on the CLI's subparsers."""
    p = sub.add_parser("report", help="write report.json and report.html of a finished run and print its summary")
    p.add_argument("run", help="run directory (the config's output): local, gs:// or s3://")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the machine-readable summary (totals, ratios, per source) as JSON; writes nothing",
    )
    add_log_level(p)
    p = sub.add_parser("explain", help="why a document was kept, removed as a duplicate, or rejected")
    p.add_argument("run", help="run directory")
    p.add_argument("doc_id", type=int, help="the document's doc_id (a signed 64-bit integer)")
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    add_log_level(p)
    p = sub.add_parser("sample", help="random removed, kept or rejected records with their source location")
    p.add_argument("run", help="run directory")
    kind = p.add_mutually_exclusive_group(required=True)
    for name in ("removed", "kept", "rejected"):
        kind.add_argument(f"--{name}", type=int, metavar="N", help=f"N random {name} records")
    kind.add_argument("--spans", type=int, metavar="N", help="N random documents the spans stage cut, before and after")
    kind.add_argument(
        "--filtered",
        nargs="?",
        const="",
        metavar="RULE",
        help="documents the filter stage dropped: for RULE (a reason such as gopher_quality.gopher_short_doc, or a "
        "filter's name) or any; --number of them",
    )
    p.add_argument("--number", "-n", type=int, default=5, metavar="N", help="with --filtered: how many (default 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0: the same sample every time)")
    p.add_argument("--json", action="store_true", help="print one JSON object per line")
    add_log_level(p)
    p = sub.add_parser("signals", help="documents sampled by their filter signals (filter/signals/)")
    p.add_argument("run", help="run directory")
    p.add_argument(
        "--where",
        required=True,
        help="a condition on the signals, terms joined by 'and' (gopher_quality.word_count < 50 and fineweb.lines > 3)",
    )
    p.add_argument("--number", "-n", type=int, default=5, metavar="N", help="how many (default 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0: the same sample every time)")
    p.add_argument("--json", action="store_true", help="print one JSON object per line")
    add_log_level(p)


def machine_summary(data: dict) -> dict:
    """What a scheduler alerts on: totals and ratios, per source too (a subset of report.json)."""
    keys = ("documents_read", "rejected", "duplicates_removed", "survivors", "written", "survivor_ratio", "tokens")
    others = [k for k in data["summary"].get("removed", {}) if k not in keys]  # only the removals the run had
    return {
        "format": data["format"],
        "run": data["run"],
        "complete": data.get("complete", True),
        "summary": data["summary"],
        "sources": {n: {k: r.get(k) for k in (*keys, *others)} for n, r in data["sources"].items()},
        **({"after_run_errors": data["after_run_errors"]} if data.get("after_run_errors") else {}),
    }


def run_command(args: argparse.Namespace) -> int:
    """Run one of :data:`COMMANDS`; output on stdout, errors raised for the CLI's one-line error."""
    if not storage.exists(storage.join(args.run, layout.MANIFEST)):
        raise ExplainError(f"{args.run!r} is not a run directory (no manifest.json)")
    if args.command == "report":
        return _report(args)
    if args.command == "signals":
        if args.number < 0:
            raise ExplainError(f"--number {args.number}: give a number of records >= 0")
        rows = sample_signals(args.run, args.where, args.number, args.seed)
        named = parse_where(args.where, [k for k in rows[0] if k not in ("decision", "excerpt")])[1] if rows else []
        for row in rows:
            print(json.dumps(row, sort_keys=True) if args.json else format_signals(row, named))
        if args.number and not rows:
            print(f"note: no document of {args.run} has {args.where}", file=sys.stderr)
        return 0
    if args.command == "explain":
        info = explain(args.run, args.doc_id)
        print(json.dumps(info, indent=2, sort_keys=True) if args.json else format_explanation(info))
        return 0
    if args.spans is not None:
        if args.spans < 0:
            raise ExplainError(f"--spans {args.spans}: give a number of records >= 0")
        for row in sample_spans(args.run, args.spans, args.seed):
            print(json.dumps(row, sort_keys=True) if args.json else format_spans_sample(row))
        return 0
    kind = next(k for k in ("removed", "kept", "rejected", "filtered") if getattr(args, k) is not None)
    n = args.number if kind == "filtered" else getattr(args, kind)
    if n < 0:
        raise ExplainError(f"--{'number' if kind == 'filtered' else kind} {n}: give a number of records >= 0")
    rows = sample(args.run, kind, n, args.seed, args.filtered or None)
    for row in rows:
        print(json.dumps(row, sort_keys=True) if args.json else format_sample(row))
    if kind == "filtered" and n and not rows:  # a known filter or rule that dropped nothing
        print(f"note: the filter stage dropped no document as {args.filtered or 'any rule'}", file=sys.stderr)
    return 0


def _incomplete(data: dict) -> str | None:
    """Why the report covers part of a run (it was killed or stopped before its accounting), or None."""
    if data.get("complete", True):
        return None
    done = ", ".join(r["stage"] for r in data["timeline"]["stages"]) or "no stage"
    return f"{data['run']} is an incomplete run (finished: {done}); its accounting was never checked"


def _report(args: argparse.Namespace) -> int:
    if args.json:
        path = storage.join(args.run, layout.REPORT_JSON)
        data = storage.read_json(path) if storage.exists(path) else build_report_data(args.run, STAGES)
        print(json.dumps(machine_summary(data), indent=2, sort_keys=True))
        return 0
    json_path, html_path = write_reports(args.run, STAGES)
    incomplete = _incomplete(storage.read_json(json_path))
    if incomplete:
        print(f"warning: {incomplete}", file=sys.stderr)
    print(summary_text(storage.read_json(storage.join(args.run, layout.MANIFEST))))
    print(f"report: {html_path} (figures: {json_path})", file=sys.stdout)
    return 0
