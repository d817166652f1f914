"""WARC to text, one core each: ours (the warc format's reader, resiliparse or trafilatura) vs datatrove
(``WarcReader`` + its ``Trafilatura`` extractor) on the same ``.warc.gz`` built from real pages: Debian's Python
documentation (python3.11-doc) repeated under distinct URLs until the file holds ``--mb`` MB (compressed), as no
bigger body of real HTML ships here.

Run: python -m bench warc [--mb 200] [--only ours-resiliparse,ours-trafilatura,datatrove,datatrove-1s]


How it measures: docs/benchmarks.md, Method notes, warc.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench.harness import DATA, REPO, child_command, child_env, write_result

READERS = ("ours-resiliparse", "ours-trafilatura", "datatrove")
DATATROVE_DEFAULT_TIMEOUT = 1.0  # seconds: datatrove's BaseExtractor default


def build(megabytes: float) -> Path:
    """``DATA/warc-<mb>mb/pages.warc.gz``: copies of the documentation's pages under distinct URLs (cached)."""
    from tests.warc_corpus import build_warc, html_pages

    folder = DATA / f"warc-{megabytes:g}mb"
    path = folder / "pages.warc.gz"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    pages = html_pages()
    partial = path.with_suffix(".part")
    with open(partial, "wb") as out:
        copy = 0
        while out.tell() < megabytes * 1e6:
            out.write(build_warc([(f"copy-{copy}/{rel}", html) for rel, html in pages]).data)
            copy += 1
    partial.rename(path)
    return path


def run_ours(path: Path, extractor: str) -> int:
    """Pages kept by our warc format reader (one split, this process)."""
    from pipeline.config import SourceConfig
    from pipeline.sources.formats import FORMATS
    from pipeline.sources.formats.base import SourceFile
    from pipeline.sources.records import RecordRules

    rules = RecordRules(html_extractor=extractor)
    source = SourceConfig(name="web", paths=[str(path)], format="warc")
    file = SourceFile(source, str(path), path.name, path.stat().st_size)
    kept = 0
    for split in FORMATS["warc"].splits(file, 1 << 40):
        for _, parsed, _ in FORMATS["warc"].read(split, rules):
            kept += parsed.reason is None
    return kept


def run_datatrove(path: Path, timeout: float) -> int:
    """Pages kept by datatrove's WarcReader + Trafilatura (default options but the per-page timeout)."""
    import logging

    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.readers import WarcReader
    from datatrove.utils.logging import logger

    logger.remove()
    logging.disable(logging.WARNING)
    return sum(1 for _ in Trafilatura(timeout=timeout).run(WarcReader(str(path.parent), glob_pattern=path.name).run()))


def child(name: str, path: Path, timeout: float) -> None:
    """One reader over the file; prints its kept pages as JSON."""
    if name.startswith("datatrove"):
        kept = run_datatrove(path, DATATROVE_DEFAULT_TIMEOUT if name == "datatrove-1s" else timeout)
    else:
        kept = run_ours(path, name.split("-", 1)[1])
    print(json.dumps({"kept": kept}))


def start(name: str, path: Path, timeout: float, out: Path) -> subprocess.Popen:
    """One reader's child process, its stdout to ``out``."""
    cmd = [*child_command(__spec__), "--child", name, "--file", str(path), "--datatrove-timeout", str(timeout)]
    with open(out, "w") as sink:
        return subprocess.Popen(cmd, stdout=sink, stderr=subprocess.DEVNULL, env=child_env(), cwd=REPO)


def measure(names: list[str], path: Path, timeout: float, jobs: int) -> dict[str, float]:
    """MB per CPU second of each reader, ``jobs`` child processes at a time; a line printed as each one ends."""
    size = path.stat().st_size / 1e6
    rates: dict[str, float] = {}
    pending = list(names)
    running: dict[int, tuple[str, float, Path]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        while pending or running:
            while pending and len(running) < jobs:
                name = pending.pop(0)
                out = Path(tmp) / f"{name}.json"
                running[start(name, path, timeout, out).pid] = (name, time.time(), out)
            pid, status, usage = os.wait4(-1, 0)
            if pid not in running:
                continue
            name, started, out = running.pop(pid)
            if status != 0:
                raise SystemExit(f"{name}: the child process failed (wait status {status})")
            kept = json.loads(out.read_text().strip().splitlines()[-1])["kept"]
            cpu, wall = usage.ru_utime + usage.ru_stime, time.time() - started
            rates[name] = size / cpu
            line = f"{name:18s} {kept:7d} pages  {cpu:8.1f} CPU s  {wall:8.1f} s wall  {rates[name]:7.3f} MB/CPU s"
            print(f"{line}  load {os.getloadavg()[0]:.1f}", flush=True)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=200, help="MB of compressed WARC (default 200)")
    parser.add_argument("--only", default=",".join(READERS), help="readers to run, comma-separated")
    parser.add_argument("--jobs", type=int, default=1, help="readers run at a time (CPU seconds are per reader)")
    parser.add_argument(
        "--datatrove-timeout", type=float, default=600, help="datatrove's per-page timeout, seconds (default 600)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, Path(args.file), args.datatrove_timeout)
        return
    path = build(args.mb)
    size = path.stat().st_size / 1e6
    print(f"file: {path} ({size:.1f} MB of .warc.gz, Debian python3.11-doc pages repeated under distinct URLs)")
    names = args.only.split(",")
    unknown = sorted(set(names) - {*READERS, "datatrove-1s"})
    if unknown:
        raise SystemExit(f"--only: unknown readers {unknown}")
    print(f"load average before: {os.getloadavg()}", flush=True)
    rates = measure(names, path, args.datatrove_timeout, args.jobs)
    print(f"load average after: {os.getloadavg()}")
    figures: dict[str, tuple[float, str]] = {}
    for base in ("datatrove", "datatrove-1s"):
        for name in ("ours-resiliparse", "ours-trafilatura"):
            if base in rates and name in rates:
                print(f"ratio {name} / {base}: {rates[name] / rates[base]:.2f}x")
                figures[f"{name}/{base}"] = (rates[name] / rates[base], "x")
    write_result("warc", args, {**{name: (rate, "MB/CPU s") for name, rate in rates.items()}, **figures})


if __name__ == "__main__":
    main()
