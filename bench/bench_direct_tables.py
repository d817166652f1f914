"""Direct tables (executors write and read Parquet with pyarrow + fsspec) vs Spark's own Parquet I/O, same process.

Both sides write the same DataFrame of JSONL text (``bench/corpus.py``) to a local directory and read it back
with a full scan; the rows read are checked equal. Prints seconds per side, their ratio and the load average.
A local directory is the only place both can write: Spark has no Hadoop FileSystem for the emulators.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=50, help="synthetic corpus size in MB (default 50)")
    parser.add_argument("--jsonl", help="a JSONL file with a text field instead (e.g. bench/real_corpus.py's)")
    parser.add_argument("--partitions", type=int, default=8, help="partitions written (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating sides (default 2)")
    args = parser.parse_args()

    from bench import harness
    from pipeline.spark.direct_tables import read_direct, write_direct

    spark = harness.session()
    source = args.jsonl or str(harness.corpus(args.mb))
    frame = spark.read.json(source).selectExpr("xxhash64(text) AS id", "text").repartition(args.partitions)
    frame = frame.persist()
    rows = frame.count()
    out = Path(tempfile.mkdtemp(prefix="bench-direct-"))

    def native(path: str):
        frame.write.mode("overwrite").parquet(path)
        return spark.read.parquet(path)

    def direct(path: str):
        write_direct(frame, path)
        return read_direct(spark, path)

    times: dict[str, dict[str, list[float]]] = {
        "native": {"write": [], "read": []},
        "direct": {"write": [], "read": []},
    }
    sums = {}
    for r in range(args.rounds):
        for name, side in (("native", native), ("direct", direct)):
            started = time.perf_counter()
            table = side(str(out / f"{name}-{r}"))
            written = time.perf_counter()
            sums[name] = table.selectExpr("count(*) AS n", "sum(length(text)) AS chars", "sum(id) AS ids").first()
            times[name]["write"].append(written - started)
            times[name]["read"].append(time.perf_counter() - written)
    assert sums["native"] == sums["direct"], sums
    print(f"{source}: {rows} documents, {args.partitions} partitions, load {os.getloadavg()[0]:.1f}")
    figures: dict[str, tuple[float, str]] = {}
    for step in ("write", "read"):
        n, d = min(times["native"][step]), min(times["direct"][step])
        print(f"{step}: native {n:.2f} s, direct {d:.2f} s, direct/native {d / n:.2f}x (best of {args.rounds})")
        figures |= {f"{step} native": (n, "s"), f"{step} direct": (d, "s"), f"{step} direct/native": (d / n, "x")}
    harness.write_result("direct_tables", args, figures)


if __name__ == "__main__":
    main()
