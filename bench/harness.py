"""Shared pieces of the benches: a session, process trees, timing, old kernels from git, the JSON result."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import psutil

from corpora.store import DATA

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[1]
RESULT_VAR = "PIPELINE_BENCH_RESULT"  # where the result JSON goes (python -m bench --result PATH sets it)


def session(master: str = "local[2]"):
    """A local SparkSession like the tests' (UI off, every speed-up on as in conf/local.yaml), with quiet logs."""
    from pipeline.config.schema import SPEEDUPS
    from pipeline.spark.session import build_session

    settings = {
        "spark.sql.shuffle.partitions": "8",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": "4g",
    }
    spark = build_session("pipeline-bench", master=master, settings=settings, speedups=SPEEDUPS)
    spark.sparkContext.setLogLevel("ERROR")
    spark.sparkContext.setCheckpointDir(str(DATA / "checkpoints"))
    return spark


class ProcessTree:
    """A process (default: this one) and its descendants sampled in a thread: ``peak`` RSS of the ``jvm``s, of the
    ``python`` processes and in ``total``; ``seen`` CPU seconds per process
    (``reaped``: a Python process below the root also counts its waited-for children; read it from one sample)."""

    def __init__(
        self, pid: int | None = None, interval: float = 0.05, also: Iterable[int] = (), reaped: bool = False
    ) -> None:
        self.pid, self.interval, self.also = os.getpid() if pid is None else pid, interval, tuple(also)
        self.reaped = reaped
        self.peak = dict.fromkeys(("jvm", "python", "total"), 0)
        self.now = dict.fromkeys(self.peak, 0)  # bytes of RSS at the last sample
        self.seen: dict[int, tuple[bool, float]] = {}  # pid -> (a JVM, CPU seconds so far)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        procs = []
        for pid in (self.pid, *self.also):  # the root, then the trees ``also`` names (their CPU only)
            try:
                root = psutil.Process(pid)
                procs += [root, *root.children(recursive=True)]
            except psutil.Error:
                if pid == self.pid:
                    return
        now = dict.fromkeys(self.peak, 0)
        for proc in procs:
            try:
                with proc.oneshot():
                    is_jvm, rss, times = "java" in proc.name(), proc.memory_info().rss, proc.cpu_times()
            except psutil.Error:
                continue
            waited = times.children_user + times.children_system if self.reaped and not is_jvm else 0.0
            self.seen[proc.pid] = (is_jvm, times.user + times.system + (waited if proc.pid != self.pid else 0.0))
            now["jvm" if is_jvm else "python"] += rss
        now["total"] = now["jvm"] + now["python"]
        self.peak = {k: max(v, now[k]) for k, v in self.peak.items()}
        self.now = now

    def cpu(self, jvm: bool | None = None) -> float:
        """CPU seconds of the tree's JVMs (``jvm``), of its other processes (not ``jvm``), or of all (None)."""
        return sum(used for is_jvm, used in self.seen.values() if jvm is None or is_jvm == jvm)

    def mib(self, *keys: str) -> dict[str, float]:
        return {k: round(self.peak[k] / 2**20, 1) for k in keys}

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> ProcessTree:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


P = TypeVar("P", bound=ProcessTree)


def run_config(out: Path | str, raw: Path | str, filters: list[dict[str, Any]] | None = None) -> Any:
    """The config of a one-source run over the JSONL ``raw`` into ``out``, with ``filters`` as its filter list."""
    import yaml

    from pipeline.config import load_config_text

    text = f'output: {out}\nsources: [{{name: bench, paths: ["{raw}"]}}]\ntokenizer: {{train: true}}\n'
    return load_config_text(text + (yaml.safe_dump({"filter": filters}) if filters else ""), [])


OWN_CACHES = ("numba", "spark-pretrain-pipeline")  # what a cold run starts without


def cold_caches(root: Path) -> dict[str, str]:
    """A cold run's environment: a fresh XDG cache linking the user's caches but ours."""
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    xdg = root / "xdg"
    xdg.mkdir(parents=True)
    if user.is_dir():
        for item in user.iterdir():
            if item.name not in OWN_CACHES:
                (xdg / item.name).symlink_to(item)
    (root / "numba").mkdir()
    return {"XDG_CACHE_HOME": str(xdg), "NUMBA_CACHE_DIR": str(root / "numba")}


def wait_for_archive(cache: Path, timeout: float = 600, key: str = "*") -> str:
    """Wait for the class-data archive builds (``key``: that archive's alone) under the XDG cache ``cache`` to end;
    what became of them."""
    jvm, deadline = cache / "spark-pretrain-pipeline" / "jvm", time.monotonic() + timeout
    while list(jvm.glob(f"classes-{key}.lock")) and time.monotonic() < deadline:
        time.sleep(1)
    if list(jvm.glob(f"classes-{key}.lock")):
        return "archive build still running"
    return "archive built" if list(jvm.glob(f"classes-{key}.jsa")) else "no archive"


def load_line() -> str:
    """The load averages and the CPU count, as the benches print them last."""
    return f"load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"


def best_of(fn: Callable[[], T], repeat: int = 1, clock: Callable[[], float] = time.process_time) -> tuple[float, T]:
    """Least ``clock`` seconds (default: CPU) over ``repeat`` calls of ``fn``, and the last call's result."""
    best, result = float("inf"), None
    for _ in range(max(1, repeat)):
        started = clock()
        result = fn()
        best = min(best, clock() - started)
    return best, result  # type: ignore[return-value]


def child_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: os.environ) with the repository first on PYTHONPATH."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def run_logged(
    cmd: list[str],
    log: Path,
    env: Mapping[str, str],
    cwd: Path = REPO,
    tree: Callable[[int], P] = ProcessTree,  # type: ignore[assignment]
    stderr: Path | None = None,
    check: bool = True,
) -> tuple[dict[str, Any], P]:
    """Run ``cmd`` (output in ``log``), sampled by ``tree(pid)``: exit code, wall and CPU seconds, load before and
    after; and the tree. With ``check``, a failure exits naming the log and its tail."""
    load, before, started = os.getloadavg()[0], resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with log.open("wb") as out, open(stderr or os.devnull, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=dict(env), stdout=out, stderr=err if stderr else subprocess.STDOUT)
        with tree(proc.pid) as sampled:
            code = proc.wait()
    if check and code != 0:
        raise SystemExit(f"{Path(cmd[0]).name} ... exited {code} ({log}):\n{log.read_text(errors='replace')[-3000:]}")
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu, loads = max(waited, sampled.cpu()), [round(load, 2), round(os.getloadavg()[0], 2)]
    return {"exit": code, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load": loads}, sampled


HELP = {
    "mb": "MB of text",
    "repeat": "rounds of each side, the best (or median) kept",
    "corpus": "the corpus: a JSONL file or a directory of JSONL shards",
    "work": "scratch directory",
    "seed": "random seed",
    "master": "Spark master",
    "list": "list the benches and tools, one per line",
    "all": "also the entries outside the default set",
    "quick": "tiny sizes: a smoke check, not figures",
    "allow_dirty": "run on uncommitted changes (commit marked -dirty)",
    "reparse": "with --from-json: show the figures again from the results",
    "json": "write the results here",
    "from_json": "print the table of an earlier result and stop",
    "out": "output file or directory (default under $PIPELINE_BENCH_DATA)",
    "speedups": "spark.speedups, the clusters' by default ('' none)",
}


def arguments(doc: str | None, **defaults: Any) -> argparse.ArgumentParser:
    """A bench's parser: one ``--name`` per keyword, typed by its default (False: a flag; None: a path)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in defaults.items():
        flag, shown = "--" + name.replace("_", "-"), HELP.get(name, name.replace("_", " "))
        if default is False:
            parser.add_argument(flag, action="store_true", help=shown)
        elif default is None:
            parser.add_argument(flag, type=Path, help=shown)
        else:
            shown += f" (default {default})" if default != "" else ""
            parser.add_argument(flag, type=type(default), default=default, help=shown)
    return parser


class BaselineError(Exception):
    """A ``--baseline-rev`` git cannot show."""


def module_at(rev: str, path: str) -> ModuleType:
    """The module ``path`` as it was at git revision ``rev``, from a copy under ``DATA/baselines/<commit>/`` (numba's
    cache of it persists); relative imports resolve against today's package."""
    show = subprocess.run(
        ["git", "rev-parse", "--verify", "--short", f"{rev}^{{commit}}"], cwd=REPO, capture_output=True, text=True
    )
    if show.returncode != 0:
        raise BaselineError(f"--baseline-rev: git does not know revision {rev!r}")
    commit = show.stdout.strip()
    source = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=REPO, capture_output=True, text=True)
    if source.returncode != 0:
        raise BaselineError(f"--baseline-rev: {path} does not exist at {rev} ({commit})")
    copy = DATA / "baselines" / commit / path
    copy.parent.mkdir(parents=True, exist_ok=True)
    if not copy.exists() or copy.read_text() != source.stdout:
        copy.write_text(source.stdout)
    package = path.removesuffix(".py").replace("/", ".").rpartition(".")[0]
    name = f"{package}._baseline_{commit}_{copy.stem}"
    spec = importlib.util.spec_from_file_location(name, copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def commit() -> str:
    """HEAD's commit, ``-dirty`` with uncommitted changes."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True
    )
    return (head or "unknown") + ("-dirty" if dirty.stdout.strip() else "")


def machine() -> dict[str, Any]:
    """Facts of the machine a figure belongs to."""
    return {
        "cpus": os.cpu_count() or 0,
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load": round(os.getloadavg()[0], 2),
    }


def write_result(
    name: str, args: argparse.Namespace | Mapping[str, Any], figures: Mapping[str, tuple[float, str]]
) -> Path:
    """Write the result JSON (bench/result.schema.json) to ``$PIPELINE_BENCH_RESULT``, else DATA/results/<name>.json."""
    given = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
    result = {
        "schema": 1,
        "name": name,
        "commit": commit(),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in given.items()},
        "figures": {label: {"value": float(value), "unit": unit} for label, (value, unit) in figures.items()},
        "machine": machine(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path = Path(os.environ.get(RESULT_VAR) or DATA / "results" / f"{name}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"result: {path}", file=sys.stderr)
    return path
