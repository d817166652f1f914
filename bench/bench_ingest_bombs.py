"""Peak memory of ingest on a decompression bomb of each format (issue 46, item 6), against a small run.

Each bomb holds one record of ``--gb`` GB (Parquet: one value of at most 1.9 GB, its format's limit) between two
small ones, in a few MB on disk; ingest runs with the default ``ingest.max_record_bytes``. While a run goes, the
RSS of this process (the driver), the JVM and every Python worker is sampled; printed: per format, the peak of
each kind of process and of their sum, for the bomb and for the same format's small file.

    python bench/bench_ingest_bombs.py [--gb 3] [--formats jsonl.gz,parquet]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from bench.harness import ProcessTree
from pipeline.config import load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext

PIECE = b"a" * (1 << 24)
FORMATS = ["jsonl.gz", "jsonl.zst", "text-lines", "text-file", "warc", "wet", "parquet"]


def _stream(f, size: int) -> None:
    left = size
    while left > 0:
        f.write(PIECE[: min(left, len(PIECE))])
        left -= len(PIECE)


def build(folder: Path, case: str, size: int) -> tuple[str, str]:
    """The bomb (``size`` > 0) or small file of ``case`` in ``folder``; its format and text unit."""
    folder.mkdir(parents=True, exist_ok=True)
    if case in ("jsonl.gz", "jsonl.zst", "text-lines", "text-file"):
        jsonl = case.startswith("jsonl")
        name = {"jsonl.gz": "a.jsonl.gz", "jsonl.zst": "a.jsonl.zst"}.get(case, "a.txt.gz")
        with open(folder / name, "wb") as raw:
            f = zstandard.ZstdCompressor(level=3).stream_writer(raw) if case == "jsonl.zst" else gzip.open(raw, "wb", 6)
            if case == "text-file":
                f.write(b"file ")
            else:
                f.write(b'{"text": "first"}\n{"text": "' if jsonl else b"first\n")
            _stream(f, size) if size else f.write(b"second")
            if case != "text-file":
                f.write(b'"}\n{"text": "third"}\n' if jsonl else b"\nthird\n")
            f.close()
        return ("jsonl" if jsonl else "text"), ("file" if case == "text-file" else "line")
    if case in ("warc", "wet"):
        kind = "response" if case == "warc" else "conversion"
        page = b"<html><body><p>A page of text.</p></body></html>" if case == "warc" else b"A page of text."
        http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" if case == "warc" else b""
        ctype = b"application/http; msgtype=response" if case == "warc" else b"text/plain"
        with open(folder / ("a.warc.gz" if case == "warc" else "a.warc.wet.gz"), "wb") as raw:
            for n in range(3):
                body = size if (n == 1 and size) else len(page)
                head = (
                    b"WARC/1.0\r\nWARC-Type: %s\r\nWARC-Target-URI: http://x.test/%d\r\n"
                    b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-%012d>\r\n"
                    b"Content-Type: %s\r\nContent-Length: %d\r\n\r\n" % (kind.encode(), n, n, ctype, len(http) + body)
                )
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as f:
                    f.write(head + http)
                    _stream(f, size) if body == size and size else f.write(page)
                    f.write(b"\r\n\r\n")
        return case, "line"
    value = min(size, int(1.9 * 2**30))
    texts = ["A page of text.", ("a" * value) if value else "Another page.", "A third page."]
    pq.write_table(pa.table({"text": pa.array(texts, pa.large_string())}), folder / "a.parquet", compression="zstd")
    return "parquet", "line"


def ingest(spark, folder: Path, fmt: str, unit: str, out: Path) -> tuple[dict, dict, object]:
    config = load_config_text(f"""
output: {out}
sources: [{{name: s, paths: ["{folder}"], format: {fmt}, text_unit: {unit}}}]
tokenizer: {{train: true}}
""")
    ctx = RunContext(config, spark=spark)
    with ProcessTree(interval=0.1) as tree:
        counts = run_stages(ctx, only="ingest", log=lambda *_: None)["ingest"].counts
    peaks = {"driver": tree.peak["root"], "jvm": tree.peak["jvm"], "workers": tree.peak["workers"]}
    return {**peaks, "sum": tree.peak["total"]}, counts["sources"]["s"], ctx.spark


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gb", type=float, default=3.0)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--build", nargs=3, metavar=("CASE", "FOLDER", "SIZE"), help="(internal) write one file")
    args = parser.parse_args()
    if args.build:  # in a process of its own, so that building leaves nothing in the driver's memory
        print(json.dumps(build(Path(args.build[1]), args.build[0], int(args.build[2]))))
        return
    root = Path(tempfile.mkdtemp(prefix="bombs-"))
    spark = None
    mib = 1 << 20
    try:
        for case in args.formats.split(","):
            rows = {}
            for label, size in (("small", 0), ("bomb", int(args.gb * 2**30))):
                folder = root / case / label
                done = subprocess.run(
                    [sys.executable, __file__, "--build", case, str(folder), str(size)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                fmt, unit = json.loads(done.stdout.strip().splitlines()[-1])
                on_disk = sum(p.stat().st_size for p in folder.iterdir())
                peaks, counts, spark = ingest(spark, folder, fmt, unit, root / case / f"run-{label}")
                rows[label] = peaks
                print(
                    f"{case:10} {label:5} {on_disk / mib:8.2f} MB on disk  peak RSS MiB: "
                    + "  ".join(f"{k} {v / mib:7.0f}" for k, v in peaks.items())
                    + f"  read {counts['documents_read']} rejects {counts.get('rejects_by_reason')}",
                    flush=True,
                )
                shutil.rmtree(folder)
            above = {k: (rows["bomb"][k] - rows["small"][k]) / mib for k in rows["bomb"]}
            print(f"{case:10} above the small run, MiB: " + "  ".join(f"{k} {v:+.0f}" for k, v in above.items()))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
