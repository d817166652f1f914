"""Every ``jobs/`` file through pyspark's own ``spark-submit`` as Dataproc and EMR stage it: the job file
alone in a directory, the package only from the zip that ``deploy/build_artifacts.sh`` builds
(docs/running.md, On a cluster)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pipeline.config import load_config
from pipeline.run.registry import STAGE_NAMES, STAGES
from tests.cluster_runs import file_digests, package_origin, require_spark_submit, submit_job


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


@pytest.mark.spark
@pytest.mark.slow
def test_each_stage_job_matches_a_local_run(
    cluster_zip: Path, standalone_config: Path, local_reference_run: Path, tmp_path: Path
) -> None:
    """ingest, dedup, train-tokenizer, tokenize, merge-blend submitted one after the other into one run
    directory: megatron/ and blend/ byte-identical to the local run. (``job_pipeline.py``, every stage in one job,
    is submitted by test_standalone_cluster.py, twice, and its files compared with the same local run.)"""
    require_spark_submit()
    reference = file_digests(local_reference_run)
    assert any(name.startswith("megatron/") for name in reference) and "blend/blend.json" in reference

    staged = tmp_path / "stage-by-stage"
    config = load_config(str(standalone_config))
    for i, stage in enumerate(STAGE_NAMES):
        done = submit_job(stage, cluster_zip, standalone_config, staged, tmp_path / stage)
        assert package_origin(done).startswith(str(cluster_zip) + os.sep), package_origin(done)
        finished = {p.name for p in (staged / "_stages").iterdir() if (p / "_SUCCESS").is_file()}
        applying = {s.name for s in STAGES[: i + 1] if s.applies(config)}  # training-indices: no training section
        assert finished == applying, f"after the {stage} job: {sorted(finished)}"
    assert file_digests(staged) == reference
