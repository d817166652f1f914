"""Running the jobs as a cluster does: the built zip, a job file alone in a directory, pyspark's own
``spark-submit``, no access to the checkout; and the local reference run they must match (docs/stages.md, Determinism).

The fixtures here are session-scoped and imported by ``tests/conftest.py``, so the zip is built once and
the reference computed once for both ``test_spark_submit.py`` and ``test_standalone_cluster.py``.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench.standalone import SPARK_BIN
from bench.standalone import spark_env as child_env
from tests.oracles import missing_tool
from tests.xdist_groups import shared_run

REPO = Path(__file__).resolve().parents[1]
SPARK_SUBMIT = SPARK_BIN / "spark-submit"
# Small settings shared by every run here, local or submitted: few tasks, a small vocabulary.
SMALL_OVERRIDES = ["ingest.partitions=2", "tokenize.partitions=2", "tokenizer.vocab_size=300"]
SUBMIT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
}
ORIGIN_LINE = "pipeline package from "  # what pipeline.cli.schedule.job_main logs before a job starts


def build_cluster_zip(out: Path) -> Path:
    """``deploy/build_artifacts.sh --zip-only`` exactly as users run it; returns the zip."""
    done = subprocess.run(
        [
            "bash",
            str(REPO / "deploy" / "build_artifacts.sh"),
            "--out",
            str(out),
            "--zip-only",
            "--python",
            sys.executable,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"build_artifacts.sh failed:\n{done.stdout}\n{done.stderr}"
    return out / "pretrain_pipeline.zip"


def write_standalone_config(directory: Path, sample_root: Path | str = REPO / "pipeline") -> Path:
    """``conf/local.yaml`` made independent of the checkout: the sample's paths under ``sample_root``
    (absolute by default; a relative root makes the paths relative to where the job starts)."""
    raw = yaml.safe_load((REPO / "conf" / "local.yaml").read_text())
    for source in raw["sources"]:
        source["paths"] = [str(Path(sample_root) / Path(p).relative_to("pipeline")) for p in source["paths"]]
    raw["spark"]["settings"] = {**raw["spark"].get("settings", {}), **SUBMIT_CONF, "spark.driver.memory": "1g"}
    raw["output"] = str(directory / "unused-default-output")  # every run passes --set output=...
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pipeline.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def write_warc_config(directory: Path, paths: str, tokenizer: dict | None = None) -> Path:
    """A run of one ``warc`` source, ``crawl`` (``paths`` relative to where the job starts), no filter, the
    Spark settings of the submitted jobs; ``tokenizer`` is its section (default: one trained here)."""
    raw = {
        "output": str(directory / "unused-default-output"),  # every run passes --set output=...
        "spark": {"settings": {**SUBMIT_CONF, "spark.driver.memory": "1g"}},
        "sources": [{"name": "crawl", "paths": [paths], "format": "warc"}],
        "tokenizer": tokenizer or {"train": True, "vocab_size": 300, "special_tokens": ["<|endoftext|>"]},
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pipeline.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def file_digests(run: Path) -> dict[str, str]:
    """sha256 of every file under ``megatron/`` and ``blend/`` (what the trainer reads)."""
    found = {}
    for sub in ("megatron", "blend"):
        for path in sorted((run / sub).rglob("*")):
            if path.is_file():
                found[str(path.relative_to(run))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def submit_job(
    stage: str,
    zip_path: Path,
    config: Path,
    output: Path,
    tmp: Path,
    master: str = "local[2]",
    extra_args: tuple[str, ...] = (),
    workdir: Path | None = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess:
    """``spark-submit --py-files <zip> job_<stage>.py`` with the job file copied alone into an empty directory.

    The working directory (``workdir``, by default a new empty directory) holds no ``pipeline`` package,
    so neither the checkout nor the job's neighbours are importable. A relative ``output`` is relative to
    it. Fails the test with the tail of the logs when the job does not exit 0.
    """
    from pipeline.cli.schedule import job_file

    job_src = REPO / job_file(stage)
    job_dir = tmp / f"staged-{job_src.stem}"
    job_dir.mkdir(parents=True)
    shutil.copy2(job_src, job_dir / job_src.name)
    workdir = workdir or tmp / f"cwd-{job_src.stem}"
    workdir.mkdir(parents=True, exist_ok=True)
    assert not (workdir / "pipeline").exists()
    cmd = [str(SPARK_SUBMIT), "--master", master, "--driver-memory", "1g", *extra_args]
    for key, value in SUBMIT_CONF.items():
        cmd += ["--conf", f"{key}={value}"]
    cmd += [
        "--py-files",
        str(zip_path),
        str(job_dir / job_src.name),
        "--config",
        str(config),
        "--set",
        f"output={output}",
        *[a for o in SMALL_OVERRIDES for a in ("--set", o)],
    ]
    done = subprocess.run(cmd, cwd=workdir, env=child_env(tmp), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{' '.join(cmd)}\nexited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-8000:]}"
    )
    assert sorted(p.name for p in job_dir.iterdir()) == [job_src.name], "the job directory gained files"
    return done


def package_origin(done: subprocess.CompletedProcess) -> str:
    """Where the driver imported ``pipeline`` from, as the job logged it (spark-submit merges the Python
    driver's stderr into its stdout)."""
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ORIGIN_LINE in ln]
    assert lines, f"the job did not log where `pipeline` came from:\n{done.stdout[-3000:]}"
    return lines[-1].split(ORIGIN_LINE, 1)[1].strip()


def require_spark_submit() -> None:
    """Skip with the reason when pyspark's launcher is not beside the interpreter."""
    if not SPARK_SUBMIT.exists():
        missing_tool(f"pyspark's spark-submit not found at {SPARK_SUBMIT}")


@pytest.fixture(scope="session")
def cluster_zip(tmp_path_factory) -> Path:
    """The ``--py-files`` zip, built once per test session by ``deploy/build_artifacts.sh --zip-only``."""
    return build_cluster_zip(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def standalone_config(tmp_path_factory) -> Path:
    """The config every submitted job and the reference run use."""
    return write_standalone_config(tmp_path_factory.mktemp("conf"))


@pytest.fixture(scope="session")
@shared_run  # the files using it run on one xdist worker (tests/xdist_groups.py)
def local_reference_run(spark, standalone_config, tmp_path_factory) -> Path:
    """``python -m pipeline run`` of the same config in this process (the test session's Spark).

    The shared session has other partition counts (local[2,3], 4 shuffle partitions) than the submitted
    jobs: docs/stages.md, Determinism says the files do not depend on partitioning, so they must still be
    byte-identical.
    """
    from pipeline.cli.commands import prepare
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext

    out = tmp_path_factory.mktemp("local-reference") / "run"
    config = prepare(str(standalone_config), [f"output={out}", *SMALL_OVERRIDES])
    run_stages(RunContext(config, spark=spark), log=lambda *_: None)
    return out
