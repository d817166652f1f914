"""Independent small queries of one step run in threads (pipeline/spark/concurrent_queries.py): results in call
order, the first failure raised, and each thread's jobs carry the step's job description."""

from __future__ import annotations

import threading

import pytest

from pipeline.spark.concurrent_queries import run_concurrently


def test_results_come_in_call_order_from_threads_that_keep_the_job_description(spark):
    sc = spark.sparkContext
    sc.setJobDescription("dedup: report")
    main = threading.get_ident()

    def query(n: int):
        def run():
            rows = spark.range(n).selectExpr("sum(id) AS s").collect()
            return rows[0]["s"], sc.getLocalProperty("spark.job.description"), threading.get_ident() != main

        return run

    try:
        results = run_concurrently(query(10), query(100), query(1000))
    finally:
        sc.setJobDescription(None)
    assert [r[0] for r in results] == [45, 4950, 499500]
    assert all(r[1] == "dedup: report" for r in results)
    assert all(r[2] for r in results)


def test_a_failing_query_raises_after_the_others_finish(spark):
    finished = []

    def ok():
        finished.append(spark.range(5).count())

    def bad():
        raise ValueError("no such column")

    with pytest.raises(ValueError, match="no such column"):
        run_concurrently(ok, bad)
    assert finished == [5]


def test_a_single_call_runs_in_the_callers_thread():
    assert run_concurrently(threading.get_ident) == [threading.get_ident()]
