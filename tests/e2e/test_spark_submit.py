"""Every ``jobs/`` file through pyspark's own ``spark-submit`` as Dataproc and EMR stage it: the job file
alone in a directory, the package only from the zip that ``deploy/build_artifacts.sh`` builds
(docs/running.md, On a cluster)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pipeline.cli.schedule import job_file
from pipeline.config import load_config
from pipeline.run.registry import STAGE_NAMES, STAGES
from tests.cluster_runs import (
    REPO,
    SMALL_OVERRIDES,
    file_digests,
    package_origin,
    require_spark_submit,
    submit_job,
)


def test_zip_holds_the_package_and_shadows_other_installs(cluster_zip: Path, tmp_path: Path) -> None:
    """The zip is importable on its own and wins over an installed copy (as on a cluster)."""
    names = zipfile.ZipFile(cluster_zip).namelist()
    assert "pipeline/cli/commands.py" in names and "pipeline/cli/schedule.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".nbi", ".nbc"))]
    probe = subprocess.run(
        [sys.executable, "-c", "import pipeline.cli.commands, pipeline; print(pipeline.__file__)"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(cluster_zip)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip().startswith(str(cluster_zip)), probe.stdout


def run_job_without_spark(
    stage: str, zip_path: Path, config: Path, output: Path, tmp: Path
) -> subprocess.CompletedProcess:
    """``python job_<stage>.py`` copied alone into an empty directory, the package only from the zip: what
    spark-submit runs for a stage the config turns off, which exits before Spark starts
    (tests/spark/run/test_schedule.py). Fails the test unless it exits 0."""
    job_src = REPO / job_file(stage)
    job_dir = tmp / f"staged-{job_src.stem}"
    job_dir.mkdir(parents=True)
    shutil.copy2(job_src, job_dir / job_src.name)
    workdir = tmp / f"cwd-{job_src.stem}"
    workdir.mkdir()
    cmd = [sys.executable, str(job_dir / job_src.name), "--config", str(config), "--set", f"output={output}"]
    cmd += [a for o in SMALL_OVERRIDES for a in ("--set", o)]
    env = {**os.environ, "PYTHONPATH": str(zip_path)}
    done = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(cmd)}\nexited {done.returncode}:\n{done.stdout}\n{done.stderr[-3000:]}"
    return done


# Spark 4 runs every stage's plans through spark-submit in test_standalone_cluster.py's whole run (job_pipeline.py,
# compared with the same local run); this test adds one Spark application per stage and the job files, a layer
# without Spark that the Spark 3.5 pass checks (CONTRIBUTING.md, Spark 4).
@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.same_plan
def test_each_stage_job_matches_a_local_run(
    cluster_zip: Path, standalone_config: Path, local_reference_run: Path, tmp_path: Path
) -> None:
    """ingest, dedup, train-tokenizer, tokenize, merge-blend submitted one after the other into one run
    directory: megatron/ and blend/ byte-identical to the local run. The jobs of the stages the config turns off
    run too, from the zip alone, with plain ``python``: they exit before Spark starts, so spark-submit would add a
    JVM launch and nothing else. (``job_pipeline.py``, every stage in one job, is submitted by
    test_standalone_cluster.py, twice, and its files compared with the same local run.)"""
    require_spark_submit()
    reference = file_digests(local_reference_run)
    assert any(name.startswith("megatron/") for name in reference) and "blend/blend.json" in reference

    staged = tmp_path / "stage-by-stage"
    config = load_config(str(standalone_config))
    for i, stage in enumerate(STAGE_NAMES):
        if STAGES[i].applies(config):
            done = submit_job(stage, cluster_zip, standalone_config, staged, tmp_path / stage)
            origin = package_origin(done)
        else:
            done = run_job_without_spark(stage, cluster_zip, standalone_config, staged, tmp_path / stage)
            assert f"{stage}: the {stage} stage is off in this config" in done.stdout, done.stdout[-2000:]
            origin = package_origin(done)
        assert origin.startswith(str(cluster_zip) + os.sep), origin
        finished = {p.name for p in (staged / "_stages").iterdir() if (p / "_SUCCESS").is_file()}
        applying = {s.name for s in STAGES[: i + 1] if s.applies(config)}  # training-indices: no training section
        assert finished == applying, f"after the {stage} job: {sorted(finished)}"
    assert file_digests(staged) == reference
