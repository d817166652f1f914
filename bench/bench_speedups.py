"""Whole `pipeline run`s with each runtime speed-up on and off, interleaved: wall and CPU seconds of the process tree.

Each setting names the speed-ups turned off (``on``: none, ``off``: all, ``-NAME[+NAME]``: those named) among
``spark.speedups``'s names (pipeline/spark/speedups/). Every round runs every setting once, in order, as its own
``python -m pipeline run --set spark.speedups=[...]`` (ingest, dedup, train-tokenizer, tokenize, merge-blend) over
``--corpus``; ``--cold`` gives each run an empty numba cache and user cache (no class-data
archive), else a first, unmeasured run fills them. Per setting: the best and every run's wall and CPU seconds,
with the load average before each run.
"""

from __future__ import annotations

import os
import shutil
import sys
from functools import partial
from pathlib import Path
from typing import Any

from bench.harness import DATA, REPO, ProcessTree, arguments, run_logged, write_result
from bench.readme_table import cold_caches, wait_for_archive
from pipeline.config.schema import SPEEDUPS as NAMES


def turned_off(setting: str) -> list[str]:
    """The speed-ups a setting turns off."""
    if setting == "on":
        return []
    if setting == "off":
        return list(NAMES)
    names = setting.removeprefix("-").split("+")
    if not setting.startswith("-") or not all(n in NAMES for n in names):
        raise SystemExit(f"--settings: {setting!r} is not on, off or -NAME[+NAME] with NAME in {', '.join(NAMES)}")
    return names


def environment(cold: Path | None) -> dict[str, str]:
    """The run's environment: a cold run's empty caches."""
    env = dict(os.environ)
    if cold is not None:
        env.update(cold_caches(cold))
    return env


def run_once(corpus: Path, work: Path, env: dict[str, str], off: list[str]) -> dict[str, Any]:
    """One ``pipeline run`` over ``corpus`` into ``work``/out with every speed-up but ``off``: wall and CPU seconds,
    load before and after."""
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    config = work / "run.yaml"
    config.write_text(
        f"output: {out}\nsources: [{{name: bench, paths: [{corpus}]}}]\ntokenizer: {{train: true}}\n"
        "spark: {master: 'local[2]', log_level: ERROR}\n"
    )
    on = ", ".join(n for n in NAMES if n not in off)
    cmd = [sys.executable, "-m", "pipeline", "run", "--config", str(config), "--set", f"spark.speedups=[{on}]"]
    run, _ = run_logged(cmd, work / "run.log", env, REPO, partial(ProcessTree, interval=0.2))
    del run["exit"]
    shutil.rmtree(out, ignore_errors=True)
    return run


def main(argv: list[str] | None = None) -> int:
    """Run the rounds and print one line per run and a summary per setting."""
    every = ",".join(["on", *(f"-{n}" for n in NAMES), "off"])
    parser = arguments(__doc__, corpus=DATA / "real-corpus-200mb.jsonl", settings=every, rounds=2, cold=False)
    args = parser.parse_args(argv)
    settings = args.settings.split(",")
    offs = {s: turned_off(s) for s in settings}
    work = DATA / "speedups"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if not args.cold:
        run_once(args.corpus, work, environment(None), [])
        print(f"warm-up: {wait_for_archive({'XDG_CACHE_HOME': str(Path.home() / '.cache')})}", flush=True)
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in settings}
    for round_ in range(args.rounds):
        for setting in settings:
            cold = work / f"cold-{round_}-{setting}" if args.cold else None
            figures = run_once(args.corpus, work, environment(cold), offs[setting])
            if cold is not None:
                shutil.rmtree(cold, ignore_errors=True)
            runs[setting].append(figures)
            print(f"round {round_} {setting:>9}: {figures}", flush=True)
    result: dict[str, tuple[float, str]] = {}
    for setting, done in runs.items():
        wall, cpu = min(r["wall_s"] for r in done), min(r["cpu_s"] for r in done)
        print(f"{setting:>9}: best wall {wall} s, best CPU {cpu} s; runs {done}")
        result[f"{setting} wall"] = (wall, "s")
        result[f"{setting} cpu"] = (cpu, "s")
    write_result("speedups", args, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
