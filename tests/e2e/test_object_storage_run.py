"""Whole runs of the bundled sample with inputs, config and run directory on gs:// and s3:// (emulators):
the megatron/ and blend/ files equal a local run's, byte for byte; a first tokenize attempt that dies
while writing to gs:// leaves nothing behind (docs/stages.md, Determinism; docs/running.md, Cluster and storage)."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

import fsspec
import pytest

from pipeline.cli.commands import prepare
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext
from tests.sample_runs import SAMPLE_SETS, SampleRun
from tests.storage_fixtures import GCS_ENV, S3_ENV, list_objects, new_bucket, restore_worker_env, spark_worker_env

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
SIZES = ["ingest.partitions=2", "tokenize.partitions=2"]
TABLES = (
    "documents/",
    "rejects/",
    "filter/documents/",
    "filter/dropped/",
    "filter/signals/",
    "dedup/edges/",
    "dedup/components/",
    "dedup/survivors/",
    "dedup/duplicates/",
)


def _digests(files: dict[str, bytes]) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items()) if k.startswith(("megatron/", "blend/"))}


def _shape(names) -> set[str]:
    """Relative file names with Parquet part-file names (random per write) reduced to their table."""
    out = set()
    for name in names:
        table = next((t for t in TABLES if name.startswith(t)), None)
        out.add(f"{table}<part>" if table and re.search(r"part-\d+", name) else name)
    return out


@pytest.fixture(scope="module")
def local_run(sample_run: SampleRun):
    """The reference: the sample on a local disk with the same SIZES (run once per session, tests/sample_runs.py)."""
    assert set(SIZES) <= set(SAMPLE_SETS)
    out = sample_run.path
    files = {
        str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file() and not p.name.startswith(".")
    }
    return files


def _remote_run(spark, scheme: str, env: tuple[str, ...], inject: bool) -> tuple[str, dict, dict]:
    """Upload the sample and a config to a new bucket, run every stage there; (run URL, files, results)."""
    bucket = new_bucket(scheme)
    fs = fsspec.filesystem(scheme)
    fs.put(str(REPO / "pipeline" / "sample"), f"{bucket}/inputs", recursive=True)
    text = (REPO / "conf" / "local.yaml").read_text()
    text = text.replace("[pipeline/sample/", f"[{bucket}/inputs/")
    assert text.count(f"{bucket}/inputs/") == 3
    fs.pipe_file(f"{bucket}/conf/run.yaml", text.encode())
    run = f"{bucket}/runs/2024-01-01"
    config = prepare(f"{bucket}/conf/run.yaml", [f"output={run}", *SIZES])  # preflight included
    old = spark_worker_env(spark, env)
    if inject:
        spark.sparkContext.setLocalProperty("pipeline.inject_failure", "tokenize")
    try:
        results = run_stages(RunContext(config, spark=spark), log=lambda *_: None)
    finally:
        spark.sparkContext.setLocalProperty("pipeline.inject_failure", None)
        restore_worker_env(spark, old)
    fs.invalidate_cache()
    files = {name: fs.cat_file(f"{run}/{name}") for name in list_objects(run)}
    return run, files, results


def test_sample_on_gcs_with_a_failed_first_tokenize_attempt_equals_a_local_run(spark, gcs_emulator, local_run):
    started = time.time()
    run, files, results = _remote_run(spark, "gs", GCS_ENV, inject=True)
    assert sum(s["retried_tasks"] for s in results["tokenize"].counts["sources"].values()) >= 1
    assert _digests(files) == _digests(local_run) != {}
    names = set(files)
    assert not [n for n in names if "_tmp" in n or "attempt" in n or ".compose-" in n], sorted(names)
    assert _shape(names) == _shape(local_run)  # nothing stray, nothing missing (tables, shards, markers)
    assert any(n.startswith("shards/web/part-") for n in names)
    print(f"gs:// run: {time.time() - started:.1f} s")


@pytest.mark.same_plan  # the gs:// run writes its tables the same way (direct); only the fsspec backend differs
def test_sample_on_s3_equals_a_local_run(spark, s3_emulator, local_run):
    started = time.time()
    run, files, results = _remote_run(spark, "s3", S3_ENV, inject=False)
    assert _digests(files) == _digests(local_run) != {}
    assert _shape(set(files)) == _shape(local_run)
    print(f"s3:// run: {time.time() - started:.1f} s")
