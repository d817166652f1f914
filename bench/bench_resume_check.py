"""Benchmark: what resume's output check costs, on a finished run directory.

    python -m pipeline run --config conf/local.yaml --set output=runs/sample   # a finished run first
    python -m bench resume_check --run runs/sample
    python -m bench resume_check --synthetic-mb 500   # megatron/ pairs of 500 MB in a temporary run

For every stage: files and bytes covered, the time to record the marker's file list and checksums
(once, when the stage finishes), the time to verify them (at every resume), and, as the baseline
measured in the same run, a full xxh3-64 read of the same files (what checksumming every byte would
cost); the ratio verify / full read is printed, with the stage's own time from its marker.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import xxhash

from bench.harness import write_result
from pipeline import storage
from pipeline.run.manifest import marker_path
from pipeline.run.registry import STAGES
from pipeline.run.stage_outputs import list_files, record, verify


def full_read_seconds(run_dir: str, files: dict[str, int]) -> float:
    """Seconds to hash every byte of ``files`` with xxh3-64 in 8 MiB blocks."""
    fs, root = storage.resolve(run_dir)
    started = time.perf_counter()
    for rel in files:
        digest = xxhash.xxh3_64()
        with fs.open(f"{root.rstrip('/')}/{rel}", "rb") as f:
            while block := f.read(8 << 20):
                digest.update(block)
    return time.perf_counter() - started


def synthetic_run(root: str, megabytes: int) -> str:
    """A run directory with megatron/{a,b,c}.{bin,idx} of ``megabytes`` MB of uint16 tokens together."""
    from pipeline.megatron import IndexedDatasetWriter

    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(root, "megatron"))
    for name in ("a", "b", "c"):
        tokens = megabytes * 10**6 // 2 // 3
        with IndexedDatasetWriter(os.path.join(root, "megatron", name), dtype=np.uint16) as w:
            done = 0
            while done < tokens:
                n = int(min(rng.integers(1, 4097), tokens - done))
                w.add_document(rng.integers(0, 50257, size=n, dtype=np.uint16))
                done += n
    return root


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--run", help="a finished run directory (local, gs:// or s3://)")
    where.add_argument("--synthetic-mb", type=int, help="build a temporary run with megatron/ pairs of this size")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings")
    args = parser.parse_args()
    if args.synthetic_mb:
        tmp = tempfile.TemporaryDirectory(prefix="bench-resume-")
        args.run = synthetic_run(tmp.name, args.synthetic_mb)
    print(
        f"{'stage':16} {'files':>6} {'MB':>8} {'record ms':>10} {'verify ms':>10} {'full read ms':>13} "
        f"{'verify/full':>12} {'stage s':>8}"
    )
    total_verify = total_full = 0.0
    for definition in STAGES:
        stage, outputs = definition.name, definition.writes
        files = list_files(args.run, outputs)
        if not files:
            continue
        marker = marker_path(args.run, stage)
        stage_seconds = storage.read_json(marker).get("seconds", float("nan")) if storage.exists(marker) else None
        recorded = record(args.run, outputs)
        assert verify(args.run, outputs, recorded) == [], f"{stage}: outputs changed while measuring"
        t_record = best(lambda o=outputs: record(args.run, o), args.repeat)
        t_verify = best(lambda o=outputs, r=recorded: verify(args.run, o, r), args.repeat)
        t_full = best(lambda f=files: full_read_seconds(args.run, f), args.repeat)
        total_verify, total_full = total_verify + t_verify, total_full + t_full
        print(
            f"{stage:16} {len(files):6d} {sum(files.values()) / 1e6:8.2f} {t_record * 1e3:10.1f} "
            f"{t_verify * 1e3:10.1f} {t_full * 1e3:13.1f} {t_verify / t_full:12.4f} "
            f"{stage_seconds if stage_seconds is not None else float('nan'):8.1f}"
        )
    print(
        f"all stages: verify {total_verify * 1e3:.1f} ms, full read {total_full * 1e3:.1f} ms, "
        f"ratio {total_verify / total_full:.4f}"
    )
    figures = {"verify": (total_verify * 1e3, "ms"), "full read": (total_full * 1e3, "ms")}
    write_result("resume_check", args, {**figures, "verify/full read": (total_verify / total_full, "x")})


if __name__ == "__main__":
    main()
