"""Dated runs: one run directory per date, built from ``{date}`` placeholders in the config.

A scheduled config names where a date's inputs are and where its run goes::

    output: gs://bucket/runs/{date}
    sources:
      - name: web
        paths: [gs://bucket/raw/web/dt={date}/]

``--date 2026-11-22`` (Airflow's ``{{ ds }}``, a workflow-template parameter, or ``yesterday`` /
``today`` in UTC for schedulers that cannot compute dates) turns every ``{date}`` into ``--set``
overrides, so each date reads only its own partition and writes only its own run directory:
earlier runs are never touched. The ``jobs/*.py`` entry points call :func:`job_main`.

``yesterday`` and ``today`` are read from :data:`CLOCK_FILE` when it exists: the Dataproc workflow
template's cluster, made for one instantiation, writes its creation time there (its init action), so the
five jobs of one run resolve the same date even when the run crosses midnight (docs/running.md).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from typing import Any

import yaml

import pipeline
from pipeline.cli.commands import main
from pipeline.errors import UsageError
from pipeline.storage import read_text

PLACEHOLDER = "{date}"
_RELATIVE = {"today": 0, "yesterday": -1}


class ScheduleError(UsageError, ValueError):
    """A bad ``--date`` value, or a config and ``--date`` that do not go together."""


CLOCK_FILE = "/etc/pretrain-pipeline/date-clock"  # written by deploy/dataproc/init_install_deps.sh


def utc_now() -> dt.datetime:
    """The clock ``today`` and ``yesterday`` are read from: :data:`CLOCK_FILE`'s UTC time when it exists,
    else now."""
    if not os.path.exists(CLOCK_FILE):
        return dt.datetime.now(dt.timezone.utc)
    with open(CLOCK_FILE, encoding="utf-8") as f:
        text = f.read().strip()
    try:
        return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        raise ScheduleError(
            f"{CLOCK_FILE} holds {text[:40]!r}, not a UTC time YYYY-MM-DDTHH:MM:SSZ: pass --date YYYY-MM-DD, "
            "or remove the file to resolve 'yesterday'/'today' from the current time"
        ) from None


def resolve_date(value: str, now: dt.datetime | None = None) -> str:
    """``YYYY-MM-DD`` for an ISO date, ``today`` or ``yesterday`` (UTC)."""
    text = value.strip().lower()
    if text in _RELATIVE:
        now = now or utc_now()
        return (now.date() + dt.timedelta(days=_RELATIVE[text])).isoformat()
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise ScheduleError(f"--date {value!r}: expected YYYY-MM-DD, 'today' or 'yesterday'") from None


def dated_overrides(raw: dict[str, Any], date: str) -> list[str]:
    """``--set`` overrides replacing ``{date}`` in every value of a raw config mapping.

    Lists of strings (source ``paths``) are replaced whole; list items with a ``name`` are addressed
    by it (``sources.web.paths``). Raises :class:`ScheduleError` when nothing is dated, because a
    dated run that wrote into an undated ``output`` would overwrite the previous run.
    """
    overrides: list[str] = []

    def walk(node: Any, key: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{key}.{k}" if key else str(k))
        elif isinstance(node, list):
            if any(isinstance(v, str) and PLACEHOLDER in v for v in node):
                overrides.append(f"{key}={json.dumps([_fill(v, date) for v in node])}")
                return
            for i, item in enumerate(node):
                name = item.get("name") if isinstance(item, dict) else None
                walk(item, f"{key}.{name if isinstance(name, str) and name else i}")
        elif isinstance(node, str) and PLACEHOLDER in node:
            overrides.append(f"{key}={json.dumps(node.replace(PLACEHOLDER, date))}")

    walk(raw, "")
    if not any(o.startswith("output=") for o in overrides):
        raise ScheduleError(
            f"--date {date}: the config's output has no {PLACEHOLDER} placeholder, so "
            "every date would share one run directory; use e.g. output: gs://b/runs/{date}"
        )
    return overrides


def _fill(value: Any, date: str) -> Any:
    return value.replace(PLACEHOLDER, date) if isinstance(value, str) else value


def _dated_keys(raw: Any) -> bool:
    if isinstance(raw, dict):
        return any(_dated_keys(v) for v in raw.values())
    if isinstance(raw, list):
        return any(_dated_keys(v) for v in raw)
    return isinstance(raw, str) and PLACEHOLDER in raw


def job_file(command: str) -> str:
    """The spark-submit entry point of a stage (``run``: the whole pipeline), relative to the repository.

    The ``job_`` prefix keeps every entry point from shadowing a module of the standard library
    (``tokenize``) or the ``pipeline`` package when the job's directory goes first on ``sys.path``.
    """
    return f"jobs/job_{'pipeline' if command == 'run' else command.replace('-', '_')}.py"


def cli_argv(command: str, argv: list[str]) -> list[str]:
    """Arguments for :func:`pipeline.cli.commands.main` from a job's ``--config C [--date D] [--set k=v] ...``.

    ``--date`` becomes overrides placed before the user's own ``--set`` (which therefore win).
    A config with ``{date}`` placeholders and no ``--date`` is refused.
    """
    parser = argparse.ArgumentParser(prog=job_file(command), add_help=True)
    parser.add_argument("--config", required=True, help="YAML config: local path, gs:// or s3://")
    parser.add_argument("--date", help="run date: YYYY-MM-DD, 'today' or 'yesterday' (UTC); fills {date}")
    args, rest = parser.parse_known_args(argv)
    try:
        raw = yaml.safe_load(read_text(args.config)) or {}
    except yaml.YAMLError as exc:
        raise ScheduleError(
            f"{args.config} is not valid YAML (quote values with {PLACEHOLDER} inside [...] lists): {exc}"
        ) from None
    if args.date is not None:
        date = resolve_date(args.date)
        if args.date.strip().lower() in _RELATIVE:  # say which day it was, and from which clock
            clock = f"{CLOCK_FILE}, the cluster's creation" if os.path.exists(CLOCK_FILE) else "the current time"
            print(f"--date {args.date}: {date} (UTC, from {clock})", flush=True)
        dated = [arg for o in dated_overrides(raw, date) for arg in ("--set", o)]
    elif _dated_keys(raw):
        raise ScheduleError(
            f"{args.config} has {PLACEHOLDER} placeholders: pass --date YYYY-MM-DD (or 'yesterday'/'today')"
        )
    else:
        dated = []
    on = ["--if-on"] if command != "run" else []  # a workflow's step for a stage the config turns off: a no-op
    return [command, "--config", args.config, *on, *dated, *rest]


def job_main(command: str, argv: list[str] | None = None) -> int:
    """What ``jobs/job_<stage>.py`` runs: resolve ``--date`` and hand over to :func:`pipeline.cli.commands.main`."""
    # Which copy of the package runs (the --py-files zip, a wheel...): the first thing to check on a cluster.
    print(f"{command}: pipeline package from {pipeline.__file__}", flush=True)
    try:
        cli_args = cli_argv(command, sys.argv[1:] if argv is None else argv)
    except ScheduleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the config cannot be read: one line, like every other config error
        print(f"error: --config: cannot read it: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return main(cli_args)
