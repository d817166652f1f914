"""Ingest of many small files on local[2] (issue #28 item 16): seconds, splits, tasks and Parquet parts.

N JSONL files of about --kb kB each are cut from real text (``../shared/fixtures/corpus.en`` beside the
repository, else the bundled sample's web source), then the ingest stage reads them as one source. Before
small files were packed into tasks, each file was one task and one Parquet part.

Run: python -m bench small_files [--files 5000] [--kb 0.5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from bench.harness import DATA, session, write_result
from pipeline.config import load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "fixtures" / "corpus.en"


def text_lines() -> list[str]:
    """Lines of real text: the shared fixture corpus, else the texts of the bundled sample's web source."""
    if CORPUS.is_file():
        return [line.strip() for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = []
    for path in sorted((REPO / "pipeline" / "sample" / "web").glob("*.jsonl")):
        lines += [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
    return lines


def write_files(directory: Path, files: int, kb: float) -> int:
    """``files`` JSONL files of about ``kb`` kB each, one record per line of text; returns the bytes written."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    lines, cursor, written = text_lines(), 0, 0
    for i in range(files):
        data = b""
        while len(data) < kb * 1000:
            data += json.dumps({"text": lines[cursor % len(lines)]}).encode() + b"\n"
            cursor += 1
        (directory / f"part-{i:05d}.jsonl").write_bytes(data)
        written += len(data)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--kb", type=float, default=0.5, help="about this many kB per file")
    args = parser.parse_args()
    raw, out = DATA / f"small-files-{args.files}x{args.kb:g}kb", DATA / "run-small-files"
    size = write_files(raw, args.files, args.kb)
    shutil.rmtree(out, ignore_errors=True)
    spark = session()
    sources = f"sources: [{{name: small, paths: ['{raw}']}}]"
    config = load_config_text(f"output: {out}\ntokenizer: {{train: true}}\n{sources}\n")
    started = time.time()
    counts = run_stages(RunContext(config, spark=spark), only="ingest", log=lambda *_: None)["ingest"].counts
    seconds = time.time() - started
    parts = len(list((out / "documents").glob("part-*.parquet")))
    print(f"input: {args.files} files, {size / 1e6:.2f} MB, {counts['sources']['small']['documents_read']} records")
    print(f"ingest stage on local[2]: {seconds:.1f} s ({counts['splits']} splits in {counts['tasks']} tasks)")
    print(f"documents/: {parts} Parquet parts")
    figures = {"ingest": (seconds, "s"), "splits": (counts["splits"], "splits"), "tasks": (counts["tasks"], "tasks")}
    write_result("small_files", args, {**figures, "parts": (parts, "files")})
    spark.stop()


if __name__ == "__main__":
    main()
