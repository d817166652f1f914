"""WARC to text, one core each: ours (the warc format's reader, resiliparse or trafilatura) vs datatrove
(``WarcReader`` + its ``Trafilatura`` extractor, default options) on the same ``.warc.gz`` built from real
pages: Debian's Python documentation (python3.11-doc) repeated under distinct URLs until the file holds
``--mb`` MB (compressed), as no bigger body of real HTML ships here.

Each reader runs in its own child process, one after the other; its CPU seconds are the child's and its
children's (datatrove extracts in a sandbox process). Figures are MB of compressed WARC per CPU second.

Run: python bench/bench_warc.py [--mb 200] [--only ours-resiliparse,ours-trafilatura,datatrove]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from harness import DATA

REPO = Path(__file__).resolve().parents[1]
READERS = ("ours-resiliparse", "ours-trafilatura", "datatrove")


def build(megabytes: float) -> Path:
    """``DATA/warc-<mb>mb/pages.warc.gz``: copies of the documentation's pages under distinct URLs (cached)."""
    sys.path.insert(0, str(REPO))
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


def run_datatrove(path: Path) -> int:
    """Pages kept by datatrove's WarcReader + Trafilatura (default options)."""
    import logging

    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.readers import WarcReader
    from datatrove.utils.logging import logger

    logger.remove()
    logging.disable(logging.WARNING)
    return sum(1 for _ in Trafilatura().run(WarcReader(str(path.parent), glob_pattern=path.name).run()))


def child(name: str, path: Path) -> None:
    """One reader over the file; prints its kept pages as JSON."""
    sys.path.insert(0, str(REPO))
    kept = run_datatrove(path) if name == "datatrove" else run_ours(path, name.split("-", 1)[1])
    print(json.dumps({"kept": kept}))


def measure(name: str, path: Path) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, pages kept) of one reader run in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, "--file", str(path)], check=True, capture_output=True, text=True
    )
    wall = time.time() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, json.loads(out.stdout.strip().splitlines()[-1])["kept"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=200, help="MB of compressed WARC (default 200)")
    parser.add_argument("--only", default=",".join(READERS), help="readers to run, comma-separated")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, Path(args.file))
        return
    path = build(args.mb)
    size = path.stat().st_size / 1e6
    print(f"file: {path} ({size:.1f} MB of .warc.gz, Debian python3.11-doc pages repeated under distinct URLs)")
    rates = {}
    for name in args.only.split(","):
        cpu, wall, kept = measure(name, path)
        rates[name] = size / cpu
        print(f"{name:18s} {kept:7d} pages  {cpu:8.1f} CPU s  {wall:8.1f} s wall  {rates[name]:7.3f} MB/CPU s")
    if "datatrove" in rates:
        for name in ("ours-resiliparse", "ours-trafilatura"):
            if name in rates:
                print(f"ratio {name} / datatrove: {rates[name] / rates['datatrove']:.2f}x")


if __name__ == "__main__":
    main()
