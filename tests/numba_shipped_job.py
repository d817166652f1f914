"""A spark-submit driver for tests/e2e/test_numba_shipped.py: on each executor, the first call of the MinHash kernels.

Run as ``spark-submit --py-files <pipeline zip> numba_shipped_job.py <out.json>``. Each of two tasks calls
``minhash_signatures`` (compiled from its first byte: ``PIPELINE_NUMBA_AFTER=0`` in the executors' environment)
and reports numba's own count of the dedup kernels it loaded from a cache and of those it compiled. The driver
writes the reports to ``out.json``. It imports nothing from ``tests``.
"""

import json
import sys

from pyspark.sql import SparkSession


def first_call(_rows):
    """Inside a task: the kernels' first call in this Python worker, and numba's cache hits and misses."""
    import os

    from pipeline.dedup.minhash import minhash_signatures

    signature = [int(v) for v in minhash_signatures(["a b c d e f g h"])[0][:2]]
    from numba.core.dispatcher import Dispatcher

    from pipeline.dedup import hashes_numba, minhash_numba, sha1_numba, shingles_numba

    hits = misses = 0
    for module in (hashes_numba, minhash_numba, sha1_numba, shingles_numba):
        for value in vars(module).values():
            if isinstance(value, Dispatcher):
                hits += sum(value.stats.cache_hits.values())
                misses += sum(value.stats.cache_misses.values())
    yield {"pid": os.getpid(), "hits": hits, "misses": misses, "signature": signature}


if __name__ == "__main__":
    spark = SparkSession.builder.appName("numba-shipped").getOrCreate()
    reports = spark.sparkContext.parallelize(range(2), 2).mapPartitions(first_call).collect()
    with open(sys.argv[1], "w") as out:
        json.dump(reports, out)
    spark.stop()
