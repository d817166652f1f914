"""Benchmark: merging IndexedDataset shards vs a plain file copy of the same bytes.

    python -m bench merge                   # 64 shards, ~500 MB of uint16 tokens
    python -m bench merge --total-mb 50     # smaller
    python -m bench merge --shards 1024 --total-mb 2000 --dir /mnt/disk

How it measures: docs/benchmarks.md, Method notes, merge.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from bench.harness import write_result
from pipeline.megatron import IndexedDatasetWriter, merge_indexed_datasets, validate


def build_shards(root: Path, shards: int, total_bytes: int, seed: int = 0) -> list[str]:
    """``shards`` uint16 shards of random documents (1..4096 tokens), ``total_bytes`` together."""
    rng = np.random.default_rng(seed)
    per_shard = total_bytes // 2 // shards
    prefixes = []
    for s in range(shards):
        prefix = str(root / "shards" / f"part-{s:05d}")
        tokens = rng.integers(0, 50257, size=per_shard, dtype=np.uint16)
        cuts = np.cumsum(rng.integers(1, 4097, size=per_shard // 1024 + 1))
        cuts = cuts[cuts < per_shard]
        with IndexedDatasetWriter(prefix, dtype=np.uint16) as w:
            for doc in np.split(tokens, cuts):
                w.add_document(doc)
        prefixes.append(prefix)
    return prefixes


def _reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--total-mb", type=float, default=500.0, help="total .bin size in MB (scale flag)")
    ap.add_argument("--dir", default=None, help="work directory (default: a fresh temp dir, removed)")
    ap.add_argument("--progress", action="store_true", help="show the merge's tqdm bar")
    args = ap.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bench_merge_", dir=args.dir))
    try:
        t0 = time.perf_counter()
        prefixes = build_shards(root, args.shards, int(args.total_mb * 1e6))
        total = sum(os.path.getsize(p + ".bin") for p in prefixes)
        idx_bytes = sum(os.path.getsize(p + ".idx") for p in prefixes)
        print(
            f"built {args.shards} shards, {total / 1e6:.1f} MB .bin, {idx_bytes / 1e6:.2f} MB .idx "
            f"in {time.perf_counter() - t0:.1f}s under {root}"
        )

        os.sync()
        shutil.copyfile(prefixes[0] + ".bin", root / "warmup.bin")  # warm the copy path
        ref = root / "reference.bin"
        with open(ref, "wb") as f:  # a file of the same total bytes, from the shards
            for p in prefixes:
                with open(p + ".bin", "rb") as src:
                    shutil.copyfileobj(src, f, 16 << 20)
        os.sync()

        t0 = time.perf_counter()
        shutil.copyfile(ref, root / "copy.bin")
        copy_s = time.perf_counter() - t0

        have_hwm = _reset_peak_rss()
        rss0 = _rss_kib("VmRSS")
        t0 = time.perf_counter()
        result = merge_indexed_datasets(prefixes, str(root / "merged"), progress=args.progress)
        merge_s = time.perf_counter() - t0
        rss_peak = _rss_kib("VmHWM") if have_hwm else -1
        validate(str(root / "merged"))
        os.sync()
        t0 = time.perf_counter()
        shutil.copyfile(ref, root / "copy2.bin")
        copy_s = min(copy_s, time.perf_counter() - t0)  # best of two copies: conservative ratio

        tracemalloc.start()
        merge_indexed_datasets(prefixes, str(root / "merged2"))
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

        mb = total / 1e6
        print(
            f"merge: {result.documents} documents, {result.tokens} tokens, {mb:.1f} MB in {merge_s:.3f}s "
            f"= {mb / merge_s:.0f} MB/s"
        )
        print(f"copy:  shutil.copyfile of {mb:.1f} MB in {copy_s:.3f}s = {mb / copy_s:.0f} MB/s")
        print(f"ratio merge/copy throughput: {copy_s / merge_s:.2f} (target >= 0.5)")
        print(
            f"merge tracemalloc peak: {traced_peak / 1e6:.2f} MB; "
            + (
                f"peak RSS growth during merge: {(rss_peak - rss0) / 1024:.1f} MB (VmHWM {rss_peak / 1024:.0f} MB)"
                if have_hwm
                else "peak RSS: unavailable (no /proc)"
            )
        )
        figures = {
            "merge": (mb / merge_s, "MB/s"),
            "copy": (mb / copy_s, "MB/s"),
            "merge/copy": (copy_s / merge_s, "x"),
        }
        write_result("merge", args, {**figures, "peak traced": (traced_peak / 1e6, "MB")})
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
