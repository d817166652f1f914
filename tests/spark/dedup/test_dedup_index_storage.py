"""The dedup index's HEAD and generations on local disk, s3:// (moto) and gs:// (fake-gcs-server):
conditional publish, concurrent commits that both land, and a two-run lookup with the index in a bucket."""

from __future__ import annotations

import random
import threading

import pyarrow.parquet as pq
import pytest

from pipeline.dedup.index.head import Head, IndexParameterError, read_head, write_head
from pipeline.dedup.index.spark.commit import compact, describe, publish
from tests.index_corpus import edit_one_word, random_doc, write_jsonl

PARAMS = {
    "num_perm": 256,
    "bands": 25,
    "rows": 10,
    "seed": 1,
    "scheme": "affine32",
    "hash": "sha1",
    "ngram": 5,
    "shingle": "word",
    "max_shingles": 100000,
}


@pytest.fixture(params=["local", "s3", "gs"])
def index_url(request, tmp_path):
    if request.param == "local":
        return str(tmp_path / "index")
    from tests.storage_fixtures import new_bucket

    request.getfixturevalue("s3_emulator" if request.param == "s3" else "gcs_emulator")
    return f"{new_bucket(request.param)}/dedup-index"


def test_head_writes_are_conditional(index_url):
    assert read_head(index_url) == (None, None)
    write_head(index_url, Head(PARAMS), None)
    with pytest.raises(FileExistsError):  # created meanwhile: a second create is refused
        write_head(index_url, Head(PARAMS), None)
    head, version = read_head(index_url)
    head.runs["a"] = {"generation": "g1", "documents": 1}
    write_head(index_url, head, version)
    stale = Head(PARAMS, {"b": {"generation": "g2", "documents": 2}})
    with pytest.raises(FileExistsError):  # HEAD changed since `version` was read
        write_head(index_url, stale, version)
    assert set(read_head(index_url)[0].runs) == {"a"}


def test_concurrent_commits_both_land_and_other_parameters_are_refused(index_url):
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def commit(i: int) -> None:
        try:
            barrier.wait()
            publish(
                index_url,
                PARAMS,
                {f"run-{i}": {"generation": f"g{i}", "documents": i, "committed": "t"}},
                {f"g{i}": {"documents": i, "bytes": 10}},
            )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    head, _ = read_head(index_url)
    assert sorted(head.runs) == [f"run-{i}" for i in range(4)] and sorted(head.generations) == ["g0", "g1", "g2", "g3"]
    with pytest.raises(IndexParameterError, match="dedup.rows"):
        publish(index_url, {**PARAMS, "rows": 9}, {"x": {"generation": "gx", "documents": 1}}, {})


@pytest.mark.spark
def test_two_runs_with_the_index_in_a_bucket_then_compacted(spark, s3_emulator, tmp_path):
    from pipeline.config import load_config_text
    from pipeline.dedup.index.spark.commit import commit_run
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext
    from tests.storage_fixtures import S3_ENV, new_bucket, restore_worker_env, spark_worker_env

    index = f"{new_bucket('s3')}/dedup-index"
    rng = random.Random(8)
    day1 = [random_doc(rng) for _ in range(30)]
    day2 = [day1[0], edit_one_word(day1[1], rng)] + [random_doc(rng) for _ in range(10)]
    write_jsonl(tmp_path / "in" / "day1.jsonl", day1)
    write_jsonl(tmp_path / "in" / "day2.jsonl", day2)
    old = spark_worker_env(spark, S3_ENV)
    try:
        contexts = []
        for day in ("day1", "day2"):
            text = (
                f"output: {tmp_path / day}\nsources:\n  - name: web\n    paths: [{tmp_path / 'in' / day}.jsonl]\n"
                f"dedup:\n  index: {index}\ntokenizer:\n  train: true\n"
            )
            ctx = RunContext(load_config_text(text), spark=spark)
            run_stages(ctx, only="ingest", log=lambda *_: None)
            counts = run_stages(ctx, only="dedup", log=lambda *_: None)["dedup"].counts
            commit_run(ctx)
            contexts.append(ctx)
        assert counts["duplicates_of_earlier_runs"] == 2 and counts["survivors"] == 10
        assert "2 run(s), 42 documents" in describe(index)
        head, _ = read_head(index)
        assert len(head.generations) == 2
        print(compact(spark, index))
        head, _ = read_head(index)
        assert len(head.generations) == 1 and len(head.runs) == 2
        assert "2 run(s), 42 documents" in describe(index)
        # day 2 again against the compacted index (its own rows are left out): the same two matches
        counts = run_stages(contexts[1], only="dedup", force="dedup", log=lambda *_: None)["dedup"].counts
        assert counts["duplicates_of_earlier_runs"] == 2
    finally:
        restore_worker_env(spark, old)
    earlier = pq.read_table(tmp_path / "day2" / "dedup" / "earlier_runs").to_pylist()
    assert {r["index_run"] for r in earlier} == {str(tmp_path / "day1")}


def test_index_cli_describes_runs_and_refuses_a_missing_index(tmp_path, capsys):
    from pipeline.cli.commands import main

    index = tmp_path / "index"
    (index / "generations" / "g1" / "docs").mkdir(parents=True)
    (index / "generations" / "g1" / "docs" / "part-0.parquet").write_bytes(b"x" * 100)
    publish(
        str(index),
        PARAMS,
        {"runs/2026-01-01": {"generation": "g1", "documents": 7, "kept": 5, "committed": "t"}},
        {"g1": {"documents": 7, "bytes": 100}},
    )
    assert main(["index", "describe", str(index)]) == 0
    out = capsys.readouterr().out
    assert "1 run(s), 7 documents, 1 generation(s), 100 bytes" in out
    assert "runs/2026-01-01: 7 documents (5 kept)" in out and "num_perm=256" in out
    assert main(["index", "describe", str(tmp_path / "nothing")]) == 1
    assert "holds no dedup index" in capsys.readouterr().err
