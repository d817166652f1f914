"""The whole pipeline through pyspark's own ``spark-submit`` with the built ``--py-files`` zip."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"


def _build_zip(out: Path) -> Path:
    """Build the artifacts exactly as users do, from the checkout (no pre-built files)."""
    subprocess.run(["bash", str(REPO / "deploy" / "build_artifacts.sh"), "--out", str(out), "--zip-only",
                    "--python", sys.executable], cwd=REPO, check=True, capture_output=True, text=True)
    return out / "pretrain_pipeline.zip"


def test_zip_holds_the_package_and_shadows_other_installs(tmp_path):
    """The zip is importable on its own and wins over an installed copy (as on a cluster)."""
    zpath = _build_zip(tmp_path / "dist")
    names = zipfile.ZipFile(zpath).namelist()
    assert "pipeline/cli.py" in names and "pipeline/schedule.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".nbi", ".nbc"))]
    probe = subprocess.run([sys.executable, "-c", "import pipeline.cli, pipeline; print(pipeline.__file__)"],
                           cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(zpath)},
                           capture_output=True, text=True, check=True)
    assert probe.stdout.strip().startswith(str(zpath)), probe.stdout


@pytest.mark.spark
@pytest.mark.skipif(not SPARK_SUBMIT.exists(), reason=f"pyspark's spark-submit not found at {SPARK_SUBMIT}")
def test_spark_submit_runs_the_whole_pipeline(tmp_path):
    """``spark-submit --py-files <zip> jobs/job_pipeline.py --config conf/local.yaml`` finishes locally."""
    zpath = _build_zip(tmp_path / "dist")
    out = tmp_path / "run"
    cmd = [str(SPARK_SUBMIT), "--master", "local[2]", "--driver-memory", "2g",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
           "--conf", "spark.default.parallelism=2", "--conf", "spark.ui.showConsoleProgress=false",
           "--py-files", str(zpath), "jobs/job_pipeline.py", "--config", "conf/local.yaml",
           "--set", f"output={out}", "--set", "tokenize.partitions=2", "--set", "tokenizer.vocab_size=300",
           "--set", "ingest.partitions=2"]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("SPARK_HOME", None)  # pyspark's own spark-submit, whatever else is installed
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, f"spark-submit failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    assert f"outputs in {out}" in done.stdout
    megatron = sorted(p.name for p in (out / "megatron").iterdir())
    for source in ("web", "wiki", "forum"):
        assert f"{source}.bin" in megatron and f"{source}.idx" in megatron, megatron
    blend = out / "blend"
    assert (blend / "blend.json").is_file() and any(p.suffix == ".npy" for p in blend.iterdir())
