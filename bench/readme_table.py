"""The bench table of docs/benchmarks.md regenerated from one commit: each row's command run, cold beside steady.

    python -m bench readme_table                      # the default set (about 55-60 min on 2 quiet cores, estimated)
    python -m bench readme_table --quick              # tiny sizes: a smoke check of every row
    python -m bench readme_table --only ingest merge
    python -m bench readme_table --from-json DIR/table.json [--reparse]   # the table again, without running

How it measures: docs/benchmarks.md, Method notes, readme_table. The rows: bench/readme_table.json.
"""

from __future__ import annotations

import json
import os
import re
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench.harness import DATA, REPO, ProcessTree, arguments, cold_caches, run_logged, wait_for_archive
from corpora.store import FIXTURES

ROWS = Path(__file__).with_suffix(".json")  # the rows, as data

Values = Mapping[str, float]


class _Format(string.Formatter):
    """str.format with ``{a/b}`` (a over b, when no value has that name) and a ``yes|no`` spec."""

    def get_value(self, key: int | str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        if isinstance(key, int) or key in kwargs or key.count("/") != 1:
            return args[key] if isinstance(key, int) else kwargs[key]
        over, under = key.split("/")
        return kwargs[over] / kwargs[under]

    def format_field(self, value: Any, format_spec: str) -> str:
        if "|" in format_spec:
            return format_spec.split("|")[0 if value else 1]
        return super().format_field(value, format_spec)


@dataclass(frozen=True)
class Figure:
    """One figure: ``show`` formats the result's values (bench/readme_table.json), with ``each`` once per match."""

    label: str
    show: str
    steady: bool = True  # False: a cold figure the bench measures itself (shown in the cold column)
    each: str | None = None

    def text(self, values: Values) -> str:
        if self.each is None:
            return _Format().vformat(self.show, (), values)
        found = []
        for name in values:
            if match := re.fullmatch(self.each, name):
                group = f"{match[1]} " if match.groups() else None
                named = {k.removeprefix(group): v for k, v in values.items() if group and k.startswith(group)}
                found.append(
                    _Format().vformat(self.show, (name, *match.groups()), {**values, **named, "value": values[name]})
                )
        if not found:
            raise KeyError(self.each)
        return ", ".join(found)


@dataclass(frozen=True)
class Entry:
    """One row: ``python -m bench <command>`` (``quick``: smoke-check arguments); ``needs``: files it cannot build."""

    name: str
    command: str
    what: str
    quick: str
    figures: tuple[Figure, ...]
    cold: bool = False
    needs: tuple[Path, ...] = ()
    default: bool = True
    from_json: Path | None = None

    @property
    def script(self) -> str:
        """The bench's module file."""
        return f"bench_{self.command.split()[0]}.py"

    def argv(self, quick: bool) -> list[str]:
        """The bench's name and its arguments (``quick``: a smoke check's)."""
        name, *args = self.command.split()
        return [name, *(self.quick.split() if quick else args)]


def _entries(path: Path = ROWS) -> tuple[Entry, ...]:
    """The rows of ``path`` as entries."""
    data = json.loads(path.read_text())

    def figures(given: list[Any]) -> Iterable[Figure]:
        for item in given:
            if isinstance(item, str):
                yield from figures(data["figure_sets"][item])
            else:
                yield Figure(*item) if isinstance(item, list) else Figure(**item)

    def entry(row: dict[str, Any]) -> Entry:
        needs = tuple(Path(p.format(shared=FIXTURES.parent)) for p in row.pop("needs", ()))
        from_json = REPO / row.pop("from_json") if "from_json" in row else None
        return Entry(**{**row, "figures": tuple(figures(row["figures"]))}, needs=needs, from_json=from_json)

    return tuple(entry(row) for row in data["rows"])


ENTRIES = _entries()


def by_name() -> dict[str, Entry]:
    return {e.name: e for e in ENTRIES}


HEADER = ("bench", "command", "what it measures", "cold", "steady", "commit", "load (before-after)", "wall / CPU s")


def values_of(path: Path) -> dict[str, float] | None:
    """A bench's JSON result's figures as name -> value; None without one."""
    figures = json.loads(path.read_text())["figures"] if path.is_file() else None
    return None if figures is None else {name: figure["value"] for name, figure in figures.items()}


def extract(figures: Iterable[Figure], values: Mapping[str, float] | None) -> str:
    """Each figure as ``label text``, joined by ``"; "``."""
    if values is None:
        return "no JSON result"
    parts = []
    for figure in figures:
        try:
            parts.append(f"{figure.label} {figure.text(values)}")
        except (KeyError, ZeroDivisionError, ValueError):
            parts.append(f"{figure.label}: not found")
    return "; ".join(parts)


def _per_run(runs: dict[str, dict[str, Any]], show: Callable[[dict[str, Any]], str]) -> str:
    shown = {k: show(r) for k, r in runs.items()}
    return next(iter(shown.values())) if len(shown) == 1 else ", ".join(f"{k} {v}" for k, v in shown.items())


def row_cells(row: dict[str, Any]) -> list[str]:
    """One table row: cold and steady figures, or why there are none."""
    runs, status, steady = row.get("runs") or {}, row.get("status", "ok"), row.get("steady") or ""
    if status != "ok":
        steady = f"{status}; {steady}" if steady else status
    cold = row.get("cold") or ("n/a (runs once)" if runs else "")
    load = _per_run(runs, lambda r: f"{r['load'][0]:g}-{r['load'][1]:g}")
    cost = _per_run(runs, lambda r: f"{r['wall_s']:g} / {r['cpu_s']:g}")
    return [row["name"], f"`{row['command']}`", row["what"], cold, steady, row["commit"], load, cost]


def render(table: dict[str, Any]) -> str:
    """The markdown table of a run's table.json."""
    kind = " (--quick: smoke-check sizes, not figures to publish)" if table.get("quick") else ""
    lines = [
        f"Measured at commit {table['commit']} on {table.get('cpus', '?')} CPUs, {table.get('started', '?')} to "
        f"{table.get('finished', 'unfinished')}{kind}; cold = empty numba cache and no JVM class-data archive, "
        "steady = the run after it (one run when cold means nothing there: the bench warms up itself).",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    for row in table["rows"]:
        lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row_cells(row)) + " |")
    return "\n".join(lines)


class TableError(Exception):
    """A usage or state error: one line, exit code 2."""


def _git(repo: Path, *args: str) -> list[str]:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if done.returncode != 0:
        raise TableError(f"git {args[0]} failed in {repo}: {done.stderr.strip()}")
    return done.stdout.splitlines()


def commit_of(repo: Path, allow_dirty: bool) -> str:
    """``repo``'s short HEAD commit; refuses uncommitted changes unless ``allow_dirty``."""
    changed = _git(repo, "status", "--porcelain")
    if changed and not allow_dirty:
        raise TableError(
            f"the working tree {repo} has {len(changed)} uncommitted change(s) (first: {changed[0].strip()}); "
            "commit them or pass --allow-dirty"
        )
    return _git(repo, "rev-parse", "--short", "HEAD")[0].strip() + ("-dirty" if changed else "")


def command_text(entry: Entry, quick: bool) -> str:
    return " ".join(["python -m bench", *entry.argv(quick)])


def json_commit(path: Path) -> str:
    """The short commits of a figure file's ``commit`` key (a string or a list)."""
    recorded = json.loads(path.read_text()).get("commit", "unknown")
    return " / ".join(c[:7] for c in ([recorded] if isinstance(recorded, str) else recorded))


def run_entry(entry: Entry, quick: bool, out: Path, commit: str) -> dict[str, Any]:
    """Run one entry (twice when cold matters) and extract its figures."""
    row: dict[str, Any] = {"name": entry.name, "command": command_text(entry, quick), "what": entry.what}
    row.update(commit=commit, runs={}, status="ok", cold=None, steady=None)
    absent = [str(p) for p in entry.needs if not p.exists()]
    if absent:
        row["status"] = f"not run: {', '.join(absent)} absent"
        return row
    if entry.from_json is not None:
        row["commit"] = f"from {entry.from_json.relative_to(REPO)}, commit {json_commit(entry.from_json)}"
    with tempfile.TemporaryDirectory(prefix="readme-table-cold-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
        env |= cold_caches(Path(tmp)) if entry.cold else {}
        for kind in ("cold", "steady") if entry.cold else ("steady",):  # each run's output and result at <stem>.*
            stem = out / (f"{entry.name}.{kind}" if entry.cold else entry.name)
            argv = [sys.executable, "-m", "bench", "--result", f"{stem}.json", *entry.argv(quick)]
            stdout, stderr, tree = Path(f"{stem}.stdout"), Path(f"{stem}.stderr"), partial(ProcessTree, interval=0.2)
            run, _ = run_logged(argv, stdout, env, REPO, tree, stderr, check=False)
            row["runs"][kind] = {**run, "stdout": stdout.name, "result": f"{stem.name}.json"}
            if kind == "cold":
                row["runs"]["cold"]["after"] = wait_for_archive(Path(env["XDG_CACHE_HOME"]))
    failed = [f"{k} exit {r['exit']}" for k, r in row["runs"].items() if r["exit"] != 0]
    if failed:
        row["status"] = "failed: " + ", ".join(failed)
    return figures_of(entry, row, out)


def figures_of(entry: Entry, row: dict[str, Any], out: Path) -> dict[str, Any]:
    """Fill the row's cold and steady figures from its runs' JSON results."""
    runs = row["runs"]
    values = {k: values_of(out / r.get("result", "")) for k, r in runs.items()}
    if "cold" in runs:
        row["cold"] = extract(entry.figures, values["cold"])
        row["steady"] = extract(entry.figures, values.get("steady"))
    elif "steady" in runs:
        own_cold = tuple(f for f in entry.figures if not f.steady)
        row["cold"] = extract(own_cold, values["steady"]) if own_cold else None
        row["steady"] = extract(tuple(f for f in entry.figures if f.steady), values["steady"])
    return row


def select(only: list[str] | None, everything: bool) -> list[Entry]:
    """The entries to run: ``only`` (in table order), else the default set."""
    known = by_name()
    if only:
        unknown = [n for n in only if n not in known]
        if unknown:
            raise TableError(f"--only: unknown entry {unknown[0]!r} (known: {', '.join(known)})")
        return [e for e in ENTRIES if e.name in only]
    return [e for e in ENTRIES if e.default or everything]


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, all=False, quick=False, allow_dirty=False, reparse=False, out=None, from_json=None)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these entries only")
    args = parser.parse_args(argv)
    try:
        if args.from_json:
            print(render(reread(args.from_json, args.reparse)))
            return 0
        entries = select(args.only, args.all)
        commit = commit_of(REPO, args.allow_dirty)
        out = args.out or DATA / f"readme-table-{commit}{'-quick' if args.quick else ''}"
        out.mkdir(parents=True, exist_ok=True)
        table: dict[str, Any] = {"commit": commit, "quick": args.quick, "cpus": os.cpu_count(), "rows": []}
        table["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for entry in entries:
            print(f"[{time.strftime('%H:%M:%S')}] {entry.name}: {command_text(entry, args.quick)}", flush=True)
            table["rows"].append(run_entry(entry, args.quick, out, commit))
            (out / "table.json").write_text(json.dumps(table, indent=1) + "\n")
        table["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        (out / "table.json").write_text(json.dumps(table, indent=1) + "\n")
        text = render(table)
        (out / "table.md").write_text(text + "\n")
        print(text)
        print(f"outputs and table.json: {out}")
    except (TableError, OSError, json.JSONDecodeError) as exc:
        print(f"readme_table: {exc}", file=sys.stderr)
        return 2
    return 0


def reread(path: Path, reparse: bool) -> dict[str, Any]:
    """An earlier table.json; with ``reparse``, its figures again from the JSON results beside it."""
    try:
        table: dict[str, Any] = json.loads(path.read_text())
        rows = table["rows"]
    except KeyError as exc:
        raise TableError(f"{path}: not a readme_table.py table (no key {exc})") from None
    if reparse:
        known = by_name()
        for row in rows:
            if row["name"] in known:
                figures_of(known[row["name"]], row, path.parent)
    return table


if __name__ == "__main__":
    sys.exit(main())
