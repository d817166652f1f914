"""A spark-submit driver for tests/e2e/test_cluster_worker_memory.py: the pipeline's task wrapper over many tasks on
a standalone cluster, then a user's Python UDF and pandas UDF in the same application, on the same workers.

Run as ``spark-submit --py-files <pipeline zip> worker_memory_job.py <out.json> <tasks>``. Every task reports
from inside its Python worker (pid, RSS from psutil, gc state, whether the zipimport patch is installed);
the driver writes them all to ``out.json`` for the test to judge. It imports nothing from ``tests``.
"""

import json
import sys
import time
import zipfile
from pathlib import Path

import pandas as pd  # at the top: the pandas UDF's type hints are resolved in this module

ROWS_PER_TASK = 10
USER_TASKS = 40  # tasks of each user UDF
BALLAST_TASKS, BALLAST = 150, 256 * 1024
PROBE = (
    "pid long, rss long, frozen long, gc_enabled boolean, patched boolean, t double, live long, rows long, keyed long"
)


def worker_state() -> dict:
    """What a task sees of its worker process (called inside a task)."""
    import gc
    import os
    import zipimport

    import psutil

    patcher = "pipeline.spark.speedups.zip_rescans"
    patched = getattr(zipimport.zipimporter.invalidate_caches, "__module__", "") == patcher
    return {
        "pid": os.getpid(),
        "rss": psutil.Process().memory_info().rss,
        "frozen": gc.get_freeze_count(),
        "gc_enabled": gc.isenabled(),
        "patched": patched,
        "t": time.time(),
        "live": len(gc.get_objects()),  # what a collection walks: the objects not frozen
    }


def pipeline_tasks(spark, tasks: int, ballast: int = 0) -> list[dict]:
    """``tasks`` tasks of the dedup stage's features step (``per_task`` around ``doc_features``), one row each.

    The command is shaped like the pipeline's own (a closure over plain values, functions imported by
    reference): nothing in it is a reference cycle. ``ballast`` > 0 adds what the pipeline's commands never
    hold: a cycle of that many bytes, made by value in each task's command (the case docs/running.md warns of).
    """
    import pyarrow as pa

    from pipeline.dedup.batches import LshParams, doc_features
    from pipeline.spark.worker_task import per_task

    params = LshParams(64, 1, 3, "affine32", "sha1", "word", None, 8, 8)
    state = worker_state  # a closure cell: the command's globals do not point back at a function of this file
    cycle: list = []
    if ballast:
        cycle.extend([bytearray(ballast), cycle])

    def probed(batches):
        rows = keyed = 0
        for out in doc_features(iter(batches), params, 3):
            rows += out.num_rows
            keyed += out.num_rows - out.column("keys").null_count
        yield pa.RecordBatch.from_pylist([{**state(), "rows": rows, "keyed": keyed + 0 * len(cycle)}])

    words = "transform(sequence(1, 60), x -> cast(((id * 7919 + x * 31) % 1009) as string))"
    docs = spark.range(0, tasks * ROWS_PER_TASK, 1, tasks).selectExpr(
        "id as doc_id", f"concat_ws(' ', {words}) as text"
    )
    return [r.asDict() for r in docs.mapInArrow(per_task(probed), PROBE).collect()]


def user_module(directory: Path) -> Path:
    """A user's own py-file, added after the pipeline's tasks ran: a zip holding ``user_mod``."""
    path = directory / "user_code.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("user_mod.py", "OFFSET = 7\n")
    return path


def cycle_collected() -> bool:
    """Inside a user's task: a reference cycle dropped by the user is freed by gc.collect()."""
    import gc
    import weakref

    class Node:
        pass

    node = Node()
    node.self = node
    ref = weakref.ref(node)
    del node
    gc.collect()
    return ref() is None


def user_udfs(spark, rows: int) -> dict[str, list[dict]]:
    """A plain Python UDF and a pandas UDF of the user's, each reporting its result and its worker's state."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf, udf

    state = "pid long, gc_enabled boolean, collected boolean, patched boolean, frozen long, live long"

    @udf(f"value long, {state}")
    def plain(x):
        import user_mod

        s = worker_state()
        keep = ("pid", "gc_enabled", "patched", "frozen", "live")
        return {"value": x * x + user_mod.OFFSET, "collected": cycle_collected(), **{k: s[k] for k in keep}}

    @pandas_udf(f"value long, {state}")
    def vectorized(x: pd.Series) -> pd.DataFrame:
        import user_mod

        s = worker_state()
        n = len(x)
        return pd.DataFrame(
            {
                "value": x * 3 + user_mod.OFFSET,
                "pid": [s["pid"]] * n,
                "gc_enabled": [s["gc_enabled"]] * n,
                "collected": [cycle_collected()] * n,
                "patched": [s["patched"]] * n,
                "frozen": [s["frozen"]] * n,
                "live": [s["live"]] * n,
            }
        )

    df = spark.range(0, rows, 1, USER_TASKS)
    out = {}
    for name, fn in (("plain", plain), ("pandas", vectorized)):
        got = df.select("id", fn(F.col("id")).alias("r")).select("id", "r.*").collect()
        out[name] = [r.asDict() for r in got]
    return out


def main() -> None:
    from pyspark.sql import SparkSession

    out, tasks = Path(sys.argv[1]), int(sys.argv[2])
    spark = SparkSession.builder.appName("worker-memory").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    from pipeline.spark.speedups import forward

    forward(spark, ["zip_rescans", "gc_freeze"])  # what spark.speedups: [zip_rescans, gc_freeze] turns on
    start = time.time()
    ours = pipeline_tasks(spark, tasks)
    seconds = time.time() - start
    spark.sparkContext.addPyFile(str(user_module(out.parent)))
    users = user_udfs(spark, USER_TASKS * 5)
    cyclic = pipeline_tasks(spark, BALLAST_TASKS, BALLAST)  # last: what it leaks stays in the workers
    report = {"tasks": ours, "seconds": seconds, "rows_per_task": ROWS_PER_TASK, "cyclic": cyclic, **users}
    out.write_text(json.dumps({**report, "ballast": BALLAST}))
    spark.stop()


if __name__ == "__main__":
    main()
