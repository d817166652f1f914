"""Where the filter stage's Python time goes: CPU seconds per filter of conf/dataproc.yaml's list inside the stage's
batch step (``filter_partition``), in one process, over the first ``--mb`` MB of the documents ingest passed on in
bench/bench_filter_stage.py's last run (``run-filter-stage-on/documents`` under the bench directory), in Arrow
batches of 10,000 rows (Spark's ``maxRecordsPerBatch``). Compiled kernels are loaded before the timing.

Run: python -m bench filter_stage first, then python -m bench filter_breakdown [--mb 50]
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import yaml

from bench.harness import DATA, write_result
from pipeline.config import load_config_text
from pipeline.filter import batches
from pipeline.filter.plan import make_plan
from pipeline.numba_backend import FILTER

REPO = Path(__file__).resolve().parents[1]
ROWS = 10_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=50, help="MB of documents (default 50)")
    args = parser.parse_args()
    documents = DATA / "run-filter-stage-on" / "documents"
    if not documents.is_dir():
        parser.error(f"--mb: {documents} is absent; run bench/bench_filter_stage.py first")
    table = ds.dataset(documents, format="parquet").to_table()
    sizes = pc.binary_length(table.column("text")).to_numpy()
    n = int(np.searchsorted(np.cumsum(sizes), args.mb * 1e6))
    batch = table.slice(0, n).combine_chunks().to_batches()[0]
    filters = yaml.safe_load((REPO / "conf" / "dataproc.yaml").read_text())["filter"]
    text = "output: /tmp/unused\nsources: [{name: bench, paths: [/tmp/unused]}]\ntokenizer: {train: true}\n"
    plan = make_plan(load_config_text(text + yaml.safe_dump({"filter": filters}), []))
    schema = batches.output_schema(batch.schema)
    FILTER.set(True)
    list(batches.filter_partition([batch.slice(0, 20)], plan, schema))  # models and kernels load here
    spent: Counter[str] = Counter()
    inner = batches.Recorder.apply

    def timed(self: Any, part: pa.RecordBatch) -> Any:
        start = time.process_time()
        out = inner(self, part)
        spent[self.name] += time.process_time() - start
        return out

    batches.Recorder.apply = timed  # type: ignore[method-assign]
    start = time.process_time()
    for _ in batches.filter_partition([batch.slice(i, ROWS) for i in range(0, n, ROWS)], plan, schema):
        pass
    total = time.process_time() - start
    mb = float(sizes[:n].sum()) / 1e6
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{mb:.1f} MB, {n} documents, one process: {total:.2f} CPU s ({mb / total:.1f} MB/s), load {load:.2f}")
    for name, seconds in spent.items():
        print(f"  {name:<18} {seconds:6.2f} s {100 * seconds / total:6.1f} %")
    print(f"  {'outside filters':<18} {total - sum(spent.values()):6.2f} s")
    shares = {f"{name} share": (100 * seconds / total, "%") for name, seconds in spent.items()}
    write_result("filter_breakdown", args, {"total": (total, "CPU s"), "rate": (mb / total, "MB/s"), **shares})


if __name__ == "__main__":
    main()
