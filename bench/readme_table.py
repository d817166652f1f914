"""The bench table of docs/benchmarks.md regenerated from one commit: each row's command run, cold beside steady.

    python -m bench readme_table                      # the default set (about 55-60 min on 2 quiet cores, estimated)
    python -m bench readme_table --quick              # tiny sizes: a smoke check of every row
    python -m bench readme_table --only ingest merge
    python -m bench readme_table --from-json DIR/table.json [--reparse]   # the table again, without running

How it measures: docs/benchmarks.md, Method notes, readme_table. Each :class:`Entry` of ``ENTRIES`` is one row;
a :class:`Figure` shows a cell from the figures of the bench's JSON result (bench/result.schema.json). ``needs``:
files the bench cannot build (absent: the row says so); ``from_json`` rows print a figure file kept in the repository.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench.harness import FIXTURES, REPO, ProcessTree, arguments, run_logged

BENCH_DATA = Path("/tmp/pipeline-bench")

Values = Mapping[str, float]


@dataclass(frozen=True)
class Figure:
    """One headline figure: ``show`` is a format string over the result's values, or a function of them (a
    missing value raises KeyError)."""

    label: str
    show: str | Callable[[Values], str]
    steady: bool = True  # False: a cold figure the bench measures itself (shown in the cold column)

    def text(self, values: Values) -> str:
        """The figure's cell text from the result's values."""
        return self.show.format_map(values) if isinstance(self.show, str) else self.show(values)


@dataclass(frozen=True)
class Entry:
    """One row of the bench table: ``python -m bench <bench>`` run with ``args`` (``quick`` for a smoke check)."""

    name: str
    command: str  # the bench's name and its default arguments (``python -m bench <command>``)
    what: str
    quick_args: str
    figures: tuple[Figure, ...]
    cold: bool = False
    needs: tuple[Path, ...] = ()
    default: bool = True
    from_json: Path | None = None

    @property
    def bench(self) -> str:
        """The bench's name for ``python -m bench NAME``."""
        return self.command.split()[0]

    @property
    def script(self) -> str:
        """The bench's module file."""
        return f"bench_{self.bench}.py"

    @property
    def args(self) -> tuple[str, ...]:
        return tuple(self.command.split()[1:])

    def argv(self, quick: bool) -> list[str]:
        """The bench's name and its arguments (``quick``: a smoke check's)."""
        return [self.bench, *(self.quick_args.split() if quick else self.args)]


def each(pattern: str, show: Callable[[Values, re.Match[str]], str]) -> Callable[[Values], str]:
    """A figure shown once per value whose name matches ``pattern`` (in the result's order), joined by ", "."""

    def shown(values: Values) -> str:
        found = [show(values, m) for name in values if (m := re.fullmatch(pattern, name))]
        if not found:
            raise KeyError(pattern)
        return ", ".join(found)

    return shown


def _cold_warm(mode: str) -> str:
    return (
        f"{{{mode} cold:.0f}} / {{{mode} warm:.0f}} s = {{{mode} cold/warm:.2f}}x (CPU {{{mode} CPU cold/warm:.2f}}x)"
    )


F = Figure
PEER = FIXTURES.parent / "peers" / "text_dedup_minhash_spark_6bb8e89.py"
RELEASE_200 = BENCH_DATA / "release-corpus-200mb"
RELEASE_1000 = BENCH_DATA / "release-corpus-1000mb"
MIXED_200 = BENCH_DATA / "mixed-corpus-200mb"  # python -m bench mixed_corpus --mb 200
VS_BIGCODE_FIGURES = (
    F("speed-up", "{speed-up:.2f}x"),
    F("CPU", "{BigCode CPU:.1f} vs {ours CPU:.1f} s = {CPU ratio:.2f}x"),
    F("survivors", "{ours survivors:.0f} vs {BigCode survivors:.0f}"),
    F("precision ours", "{precision ours:.3f} (matched pair)"),
    F("precision script", "{precision script:.3f} (best match)"),
    F("archive", lambda v: "mapped" if v["archive mapped"] else "recorded"),
    F("features step", "{features step:.1f} MB/s"),
)
VS_BIGCODE = "ingest + dedup vs the BigCode script on the real release corpus: time, CPU, survivors, precision"


def vs_bigcode(name: str, corpus: Path | None, mb: int, what: str, more: str = "", **kw: Any) -> Entry:
    """A row of ``vs_bigcode`` at ``mb`` MB of ``corpus`` (None: synthetic text), ``more`` arguments after them;
    ``kw``: the Entry's ``cold`` and ``default``, and ``figures`` shown after VS_BIGCODE_FIGURES."""
    given = f"--corpus {corpus} " if corpus else ""
    command, quick = f"vs_bigcode {given}--mb {mb}{more}", f"{given}--mb 5 --sample 50{more}"
    figures = (*VS_BIGCODE_FIGURES, *kw.pop("figures", ()))
    return Entry(name, command, what, quick, figures, needs=(PEER, corpus) if corpus else (PEER,), **kw)


ENTRIES: tuple[Entry, ...] = (
    vs_bigcode("vs_bigcode_release", RELEASE_200, 200, VS_BIGCODE, cold=True),
    vs_bigcode(
        "vs_bigcode_mixed",
        MIXED_200,
        200,
        "the same as a user runs it (`pipeline ingest`, then `pipeline dedup`) on bench/mixed_corpus.py's mixed-size"
        " real corpus",
        " --as-user",
        figures=(F("removed here", "{removed exact:.1%} exact copies, {removed near:.1%} near"),),
        cold=True,
    ),
    vs_bigcode(
        "vs_bigcode_release_1gb",
        RELEASE_1000,
        1000,
        "the same at 1 GB of the release corpus (steady only: the cold run is the 200 MB row's)",
    ),
    vs_bigcode("vs_bigcode_synthetic", None, 200, "the same on bench/corpus.py's synthetic text", default=False),
    Entry(
        "tokenize",
        "tokenize --repeat 2",
        "tokenize stage's Python workers per CPU s vs the bare encoder",
        "--mb 5 --repeat 1 --partitions 2",
        (
            F("ratio", "{workers/bare:.2f}x"),
            F("whole stage", "{whole stage/bare:.2f}x"),
            F("no-op floor", "{no-op floor:.2f} CPU s"),
            F("cold workers", "{cold/bare:.2f}x", steady=False),
        ),
    ),
    Entry(
        "blend",
        "megatron blend --size 100000000",
        "blending indices vs megatron-core's C++ helper (Megatron mode bit-equal)",
        "blend --size 1000000 --repeat 1 --datasets 3",
        (
            F("ratio(best)", each(r"\d+ datasets (ours.*)", lambda v, m: f"{m[1]} {v[m[0]]:.2f}x")),
            F("first call", "compile {first call compile:.2f} s, load {first call load:.2f} s", steady=False),
        ),
    ),
    Entry(
        "training_indices",
        "megatron training_indices --repeat 5",
        "megatron_cache/ files: ours vs megatron-core's builder",
        "training_indices --tokens 1e7 --repeat 1",
        (
            F(
                "ours/megatron-core",
                "wall {seconds ours/megatron-core:.2f}x fresh, {again ours/megatron-core:.2f}x again; "
                "CPU {cpu ours/megatron-core:.2f}x fresh, {cpu_again ours/megatron-core:.2f}x again; "
                "{identical files:.0f} files identical",
            ),
        ),
    ),
    Entry(
        "filter",
        "filter --mb 100 --repeat 1",
        "each filter vs datatrove 0.10.1 (language: fastText predict), one core",
        "--mb 1 --repeat 1",
        (
            F(
                "ours/theirs",
                each(
                    r"(\w+) ours",
                    lambda v, m: (
                        f"{m[1]} {v[m[0]]:.2f} vs {v[m[1] + ' theirs']:.2f} MB/s ({v[m[0]] / v[m[1] + ' theirs']:.1f}x)"
                    ),
                ),
            ),
        ),
    ),
    Entry(
        "filter_stage",
        "filter_stage --mb 200",
        "filter stage (six filters) beside ingest + dedup, local[2]",
        "--mb 10",
        (F("filter/(ingest+dedup)", "{filter/(ingest+dedup):.2f}x"), F("whole run", "{whole run:.2f}x")),
    ),
    Entry(
        "cold_cluster",
        "cold_cluster --mb 20",
        "fresh standalone cluster, empty caches: first run over second, without and with the shipped numba cache",
        "--mb 2",
        (F("zip only", _cold_warm("zip")), F("numba cache", _cold_warm("cache"))),
    ),
    Entry(
        "scale",
        "scale --from-json docs/scaling-1-to-10gb.json",
        "whole run on a standalone cluster, 1 to 10 GB: CPU s per GB (docs/scaling.md)",
        "--from-json docs/scaling-1-to-10gb.json",
        (F("CPU s/GB", each(r"([\d.]+) GB", lambda v, m: f"{m[1]} GB {v[m[0]]:.0f}")),),
        from_json=REPO / "docs" / "scaling-1-to-10gb.json",
    ),
)


def by_name() -> dict[str, Entry]:
    """The entries by name."""
    return {e.name: e for e in ENTRIES}


HEADER = ("bench", "command", "what it measures", "cold", "steady", "commit", "load (before-after)", "wall / CPU s")


def values_of(path: Path) -> dict[str, float] | None:
    """The figures of a bench's JSON result as name -> value; None when the bench wrote none."""
    if not path.is_file():
        return None
    return {name: figure["value"] for name, figure in json.loads(path.read_text())["figures"].items()}


def extract(figures: Iterable[Figure], values: Mapping[str, float] | None) -> str:
    """Each figure shown as ``label text``, figures joined by ``"; "``; ones the result lacks say so."""
    if values is None:
        return "no JSON result"
    parts = []
    for figure in figures:
        try:
            parts.append(f"{figure.label} {figure.text(values)}")
        except (KeyError, ZeroDivisionError, ValueError):
            parts.append(f"{figure.label}: not found")
    return "; ".join(parts)


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


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
    """The markdown table of a run (bench/readme_table.py's table.json)."""
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
        lines.append("| " + " | ".join(_cell(c) for c in row_cells(row)) + " |")
    return "\n".join(lines)


OWN_CACHES = ("numba", "spark-pretrain-pipeline")  # what a cold run starts without
ARCHIVE_WAIT_SECONDS = 600


class TableError(Exception):
    """A usage or state error of this script: printed as one line, exit code 2."""


def _git(repo: Path, *args: str) -> list[str]:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if done.returncode != 0:
        raise TableError(f"git {args[0]} failed in {repo}: {done.stderr.strip()}")
    return done.stdout.splitlines()


def commit_of(repo: Path, allow_dirty: bool) -> str:
    """The short commit of ``repo``'s HEAD; refuses uncommitted changes unless ``allow_dirty``."""
    changed = _git(repo, "status", "--porcelain")
    if changed and not allow_dirty:
        raise TableError(
            f"the working tree {repo} has {len(changed)} uncommitted change(s) (first: {changed[0].strip()}); "
            "commit them or pass --allow-dirty"
        )
    return _git(repo, "rev-parse", "--short", "HEAD")[0].strip() + ("-dirty" if changed else "")


def cold_caches(root: Path) -> dict[str, str]:
    """Environment for a cold run: a fresh XDG cache holding links to the user's caches but ours."""
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    xdg = root / "xdg"
    xdg.mkdir(parents=True)
    if user.is_dir():
        for item in user.iterdir():
            if item.name not in OWN_CACHES:
                (xdg / item.name).symlink_to(item)
    (root / "numba").mkdir()
    return {"XDG_CACHE_HOME": str(xdg), "NUMBA_CACHE_DIR": str(root / "numba")}


def wait_for_archive(env: dict[str, str], timeout: float = ARCHIVE_WAIT_SECONDS) -> str:
    """Wait until no class-data archive build holds a lock in the cold cache; what became of it."""
    jvm = Path(env["XDG_CACHE_HOME"]) / "spark-pretrain-pipeline" / "jvm"
    deadline = time.monotonic() + timeout
    while list(jvm.glob("classes-*.lock")) and time.monotonic() < deadline:
        time.sleep(2)
    if list(jvm.glob("classes-*.lock")):
        return "archive build still running"
    return "archive built" if list(jvm.glob("classes-*.jsa")) else "no archive"


def run_command(argv: list[str], env: dict[str, str], stem: Path) -> dict[str, Any]:
    """Run the bench command ``argv`` (``python -m bench NAME ...``) with its JSON result at ``stem``.json, its stdout
    and stderr saved as ``stem``.stdout / .stderr; load, wall, CPU, exit code."""
    argv = [*argv[:3], "--result", f"{stem}.json", *argv[3:]]
    stdout, stderr = Path(f"{stem}.stdout"), Path(f"{stem}.stderr")
    run, _ = run_logged(argv, stdout, env, REPO, partial(ProcessTree, interval=0.2), stderr, check=False)
    return {**run, "stdout": stdout.name, "result": f"{stem.name}.json"}


def command_text(entry: Entry, quick: bool) -> str:
    """The row's command as a user types it."""
    return " ".join(["python -m bench", *entry.argv(quick)])


def json_commit(path: Path) -> str:
    """The short commits recorded in a figure file's ``commit`` key (a string or a list)."""
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
    argv = [sys.executable, "-m", "bench", *entry.argv(quick)]
    base = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable}
    if entry.from_json is not None:
        row["commit"] = f"from {entry.from_json.relative_to(REPO)}, commit {json_commit(entry.from_json)}"
    if entry.cold:
        with tempfile.TemporaryDirectory(prefix="readme-table-cold-") as tmp:
            env = {**base, **cold_caches(Path(tmp))}
            row["runs"]["cold"] = run_command(argv, env, out / f"{entry.name}.cold")
            row["runs"]["cold"]["after"] = wait_for_archive(env)
            row["runs"]["steady"] = run_command(argv, env, out / f"{entry.name}.steady")
    else:
        row["runs"]["steady"] = run_command(argv, base, out / entry.name)
    failed = [f"{k} exit {r['exit']}" for k, r in row["runs"].items() if r["exit"] != 0]
    if failed:
        row["status"] = "failed: " + ", ".join(failed)
    return figures_of(entry, row, out)


def figures_of(entry: Entry, row: dict[str, Any], out: Path) -> dict[str, Any]:
    """Fill the row's cold and steady figures from the JSON results its runs wrote."""
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
    """The entries to run: ``only`` (in table order, a reader after the bench it reads), else the default set."""
    known = by_name()
    if only:
        unknown = [n for n in only if n not in known]
        if unknown:
            raise TableError(f"--only: unknown entry {unknown[0]!r} (known: {', '.join(known)})")
        return [e for e in ENTRIES if e.name in only]
    return [e for e in ENTRIES if e.default or everything]


def main(argv: list[str] | None = None) -> int:
    """Run the selected entries (or reread a table) and print the markdown table."""
    parser = arguments(__doc__, all=False, quick=False, allow_dirty=False, reparse=False, out=None, from_json=None)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these entries only")
    args = parser.parse_args(argv)
    try:
        if args.from_json:
            print(render(reread(args.from_json, args.reparse)))
            return 0
        entries = select(args.only, args.all)
        commit = commit_of(REPO, args.allow_dirty)
        out = args.out or BENCH_DATA / f"readme-table-{commit}{'-quick' if args.quick else ''}"
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
    """An earlier table.json; with ``reparse``, its figures shown again from the JSON results beside it."""
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
