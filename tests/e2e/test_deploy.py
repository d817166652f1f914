"""Deploy files: shell scripts pass shellcheck, templates and steps parse and reference only what
exists, dry runs print the expected commands, the configs validate, the Airflow DAG imports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from deploy.build_artifacts import REQUIREMENTS_NAME, ZIP_NAME
from pipeline.cli.schedule import dated_overrides, job_file
from pipeline.config import load_config_text
from pipeline.run.registry import STAGE_NAMES
from tests.oracles import missing_tool

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
SCRIPTS = sorted(DEPLOY.rglob("*.sh"))
# Files the packaging script builds into dist/ (not in the repository).
BUILT = {"dist", f"dist/{ZIP_NAME}", f"dist/{REQUIREMENTS_NAME}", "dist/env-py3.11.tar.gz"}


def _job_file(stage: str) -> str:
    return job_file(stage)


def _artifact_refs(text: str, scheme: str) -> set[str]:
    """Paths under the ``<scheme>://ARTIFACTS/`` placeholder prefix, relative to the repository."""
    return set(re.findall(rf"{scheme}://ARTIFACTS/([^\s\"',\]]+)", text))


def _assert_exists(refs: set[str]) -> None:
    missing = sorted(r for r in refs if r not in BUILT and not (REPO / r).is_file())
    assert not missing, f"referenced but not in the repository: {missing}"


def _run(*args: str) -> str:
    done = subprocess.run(["bash", *args], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_stage_has_a_job_file():
    for stage in (*STAGE_NAMES, "run"):
        assert (REPO / _job_file(stage)).is_file(), stage


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(s.relative_to(REPO)) for s in SCRIPTS])
def test_shellcheck(script):
    if shutil.which("shellcheck") is None:
        missing_tool("shellcheck is not installed (apt-get install shellcheck)")
    done = subprocess.run(["shellcheck", "--severity=style", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_scripts_are_strict_and_executable():
    assert SCRIPTS, "no deploy scripts found"
    for script in SCRIPTS:
        text = script.read_text()
        assert text.startswith("#!/usr/bin/env bash"), script
        assert "set -euo pipefail" in text, script
        assert script.stat().st_mode & 0o111, f"{script} is not executable"


def test_workflow_template_runs_the_stages_in_order_and_references_existing_files():
    path = DEPLOY / "dataproc" / "workflow_template.yaml"
    template = yaml.safe_load(path.read_text())
    jobs = template["jobs"]
    assert [j["stepId"] for j in jobs] == list(STAGE_NAMES)
    for previous, job in zip(jobs, jobs[1:], strict=False):
        assert job["prerequisiteStepIds"] == [previous["stepId"]]
    for job in jobs:
        spec = job["pysparkJob"]
        assert spec["mainPythonFileUri"] == f"gs://ARTIFACTS/{_job_file(job['stepId'])}"
        assert spec["pythonFileUris"] == [f"gs://ARTIFACTS/dist/{ZIP_NAME}"]
        assert spec["args"][0] == "--config" and spec["args"][2] == "--date"
    _assert_exists(_artifact_refs(path.read_text(), "gs"))
    # Every parameter field points at an existing job argument.
    by_step = {j["stepId"]: j for j in jobs}
    names = {p["name"] for p in template["parameters"]}
    assert names == {"CONFIG", "RUN_DATE"}
    for param in template["parameters"]:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", param["name"])
        assert len(param["fields"]) == len(jobs)
        for field in param["fields"]:
            m = re.fullmatch(r"jobs\['([\w-]+)'\]\.pysparkJob\.args\[(\d+)\]", field)
            assert m and m.group(1) in by_step and int(m.group(2)) < len(by_step[m.group(1)]["pysparkJob"]["args"])
    regex = next(p for p in template["parameters"] if p["name"] == "RUN_DATE")["validation"]["regex"]["regexes"][0]
    assert re.fullmatch(regex, "2026-11-22") and re.fullmatch(regex, "yesterday")
    assert not re.fullmatch(regex, "2026/11/22")


def test_emr_steps_run_the_stages_in_order_and_reference_existing_files():
    path = DEPLOY / "emr" / "steps.json"
    steps = json.loads(path.read_text())
    assert len(steps) == len(STAGE_NAMES)
    for stage, step in zip(STAGE_NAMES, steps, strict=True):
        # The AWS CLI's --steps shape (not the API's HadoopJarStep): the CLI adds spark-submit.
        assert set(step) == {"Type", "Name", "ActionOnFailure", "Args"}
        args = step["Args"]
        assert step["Type"] == "Spark" and "spark-submit" not in args
        assert args[args.index("--py-files") + 2] == f"s3://ARTIFACTS/{_job_file(stage)}"
        assert args[args.index("--py-files") + 1] == f"s3://ARTIFACTS/dist/{ZIP_NAME}"
        assert args[args.index("--date") + 1] == "RUN_DATE"
        assert step["ActionOnFailure"] == "CANCEL_AND_WAIT"
    _assert_exists(_artifact_refs(path.read_text(), "s3"))


@pytest.mark.parametrize("name", ["dataproc.yaml", "emr.yaml"])
def test_cluster_configs_validate_for_a_date(name):
    text = (REPO / "conf" / name).read_text()
    config = load_config_text(text, dated_overrides(yaml.safe_load(text), "2026-11-22"), origin=name)
    scheme = "gs" if name == "dataproc.yaml" else "s3"
    assert config.output == f"{scheme}://YOUR_BUCKET/runs/2026-11-22"
    for source in config.sources:
        assert all(p.startswith(f"{scheme}://") and "dt=2026-11-22" in p for p in source.paths)
    settings = config.spark.settings
    assert "spark.executor.memory" in settings and int(settings["spark.sql.shuffle.partitions"]) > 8
    assert "graphframes-spark3_2.12-0.10.1.jar" in settings["spark.jars"]


def test_create_cluster_dry_run_uses_the_init_action_and_the_config():
    out = _run("deploy/dataproc/create_cluster.sh", "--bucket", "bkt", "--dry-run")
    assert "gcloud dataproc clusters create pretrain" in out
    assert "gs://bkt/pretrain/deploy/dataproc/init_install_deps.sh" in out
    assert "PIPELINE_DIST=gs://bkt/pretrain/dist" in out.replace("\\", "")
    assert "spark:spark.executor.memory=19g" in out  # the config's value wins over the computed one
    assert "gs://bkt/pretrain/jars/graphframes-spark3_2.12-0.10.1.jar" in out
    assert "YOUR_BUCKET" not in out


# Per-node figures of the machine types the configs are sized for (see the comments in conf/):
# vCPUs, and YARN's memory per node (yarn.nodemanager.resource.memory-mb) in MB.
NODES = {
    "n2-highmem-8": (8, 49152),  # Dataproc: ~75% of 64 GiB
    "r6i.2xlarge": (8, 57344),  # EMR's default for a 64 GiB 2xlarge
}
AM_MB = 1024  # the YARN application master (client mode) needs a container somewhere
MIN_ALLOCATION_MB = 1024  # YARN rounds each container up to a multiple of this


def _gib(value: str) -> int:
    m = re.fullmatch(r"(\d+)([gm])", value)
    assert m, value
    return int(m.group(1)) * (1024 if m.group(2) == "g" else 1)


def _executors_per_node(vcpus: int, yarn_mb: int, cores: int, memory_mb: int, overhead_mb: int) -> int:
    container = -(-(memory_mb + overhead_mb) // MIN_ALLOCATION_MB) * MIN_ALLOCATION_MB
    return min(vcpus // cores, (yarn_mb - AM_MB) // container)


@pytest.mark.parametrize(("name", "machine"), [("dataproc.yaml", "n2-highmem-8"), ("emr.yaml", "r6i.2xlarge")])
def test_config_executors_fill_each_node(name, machine):
    settings = yaml.safe_load((REPO / "conf" / name).read_text())["spark"]["settings"]
    vcpus, yarn_mb = NODES[machine]
    cores = int(settings["spark.executor.cores"])
    assert 4 <= cores <= 5, "the platforms recommend about 4-5 cores per executor"
    memory, overhead = _gib(settings["spark.executor.memory"]), _gib(settings["spark.executor.memoryOverhead"])
    per_node = _executors_per_node(vcpus, yarn_mb, cores, memory, overhead)
    # Every core of a node runs an executor: memory does not leave cores idle (24g + 3g did: 1 per node).
    assert per_node == vcpus // cores == 2, (name, per_node)
    assert overhead >= memory // 8  # Python workers live in the overhead


def test_the_deploy_scripts_use_the_sized_machine_types():
    assert 'WORKER_TYPE="${WORKER_TYPE:-n2-highmem-8}"' in (DEPLOY / "dataproc" / "create_cluster.sh").read_text()
    assert "machineTypeUri: n2-highmem-8" in (DEPLOY / "dataproc" / "workflow_template.yaml").read_text()
    assert 'INSTANCE_TYPE="${INSTANCE_TYPE:-r6i.2xlarge}"' in (DEPLOY / "emr" / "run.sh").read_text()


@pytest.mark.parametrize(
    ("machine", "vcpus", "memory_gb"),
    [
        ("n2-standard-16", 16, 64),
        ("n2-highmem-8", 8, 64),
        ("n2-standard-8", 8, 32),
        ("n2-highmem-16", 16, 128),
        ("n2-highcpu-16", 16, 16),
    ],
)
def test_create_cluster_sizes_executors_that_fit_yarn(tmp_path, machine, vcpus, memory_gb):
    bare = tmp_path / "bare.yaml"
    bare.write_text("output: x\nsources: []\n")
    done = subprocess.run(
        [
            "bash",
            "deploy/dataproc/create_cluster.sh",
            "--bucket",
            "b",
            "--workers",
            "2",
            "--worker-type",
            machine,
            "--config",
            str(bare),
            "--dry-run",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    cores = int(re.search(r"spark\.executor\.cores=(\d+)", out).group(1))
    memory = _gib(re.search(r"spark\.executor\.memory=(\w+)", out).group(1))
    overhead = _gib(re.search(r"spark\.executor\.memoryOverhead=(\w+)", out).group(1))
    yarn_mb = memory_gb * 1024 * 75 // 100  # Dataproc: ~75% of the machine
    assert 4 <= cores <= 5
    assert _executors_per_node(vcpus, yarn_mb, cores, memory, overhead) == vcpus // cores


def test_serverless_dry_run_submits_each_stage_once_with_one_date(tmp_path):
    out = _run(
        "deploy/dataproc/run_serverless.sh", "--bucket", "b", "--date", "yesterday", "--env-archive", "--dry-run"
    )
    lines = [line for line in out.splitlines() if "batches submit pyspark" in line]
    assert [re.search(r"(jobs/\w+\.py)", line).group(1) for line in lines] == [job_file(s) for s in STAGE_NAMES]
    dates = {re.search(r"--date (\S+)", line).group(1) for line in lines}
    assert len(dates) == 1 and re.fullmatch(r"\d{4}-\d{2}-\d{2}", dates.pop())
    # Runtime 2.2 is Python 3.12; engine star: no GraphFrames jars (the quick start never uploads them).
    assert all("dist/env-py3.12.tar.gz#environment" in line for line in lines)
    assert all(".jar" not in line for line in lines)
    graphframes = tmp_path / "gf.yaml"
    graphframes.write_text((REPO / "conf" / "dataproc.yaml").read_text().replace("engine: star", "engine: graphframes"))
    out = _run(
        "deploy/dataproc/run_serverless.sh",
        "--bucket",
        "b",
        "--date",
        "2026-11-22",
        "--container-image",
        "img",
        "--local-config",
        str(graphframes),
        "--dry-run",
    )
    lines = [line for line in out.splitlines() if "batches submit pyspark" in line]
    assert all("_2.13-0.10.1.jar" in line and "spark.jars=" not in line for line in lines)
    done = subprocess.run(
        ["bash", "deploy/dataproc/run_serverless.sh", "--bucket", "b", "--date", "2026-11-22", "--dry-run"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "--container-image" in done.stderr


def test_workflow_and_emr_dry_runs():
    out = _run("deploy/dataproc/workflow.sh", "run", "--bucket", "b", "--date", "2026-11-22", "--dry-run")
    assert "CONFIG=gs://b/pretrain/conf/dataproc.yaml\\,RUN_DATE=2026-11-22" in out
    out = _run(
        "deploy/dataproc/workflow.sh",
        "schedule",
        "--bucket",
        "b",
        "--project",
        "p",
        "--service-account",
        "sa@p.iam.gserviceaccount.com",
        "--dry-run",
    )
    assert "workflowTemplates/pretrain-pipeline:instantiate" in out and "yesterday" in out
    out = _run(
        "deploy/emr/run.sh", "steps", "--bucket", "b", "--cluster-id", "j-1", "--date", "2026-11-22", "--dry-run"
    )
    steps = json.loads(out[: out.index("\n+ aws emr add-steps")])
    assert len(steps) == len(STAGE_NAMES)
    assert "ARTIFACTS" not in json.dumps(steps) and "RUN_DATE" not in json.dumps(steps)
    assert "--cluster-id j-1 --steps file://" in out
    out = _run("deploy/emr/run.sh", "create", "--bucket", "b", "--dry-run")
    assert "PYSPARK_PYTHON" in out and "s3://b/pretrain/deploy/emr/bootstrap.sh" in out


def test_upload_dry_run_stages_every_job_and_config():
    out = _run("deploy/upload.sh", "--dest", "gs://b/pretrain", "--dry-run")
    for job in (REPO / "jobs").glob("*.py"):
        assert f"gs://b/pretrain/jobs/{job.name}" in out
    for ref in (
        "conf/dataproc.yaml",
        f"dist/{ZIP_NAME}",
        "deploy/dataproc/init_install_deps.sh",
        "jars/graphframes-spark3_2.12-0.10.1.jar",
        "jars/graphframes-graphx-spark3_2.12-0.10.1.jar",
    ):
        assert f"gs://b/pretrain/{ref}" in out, ref


def test_job_files_shadow_no_module():
    """Staged alone, a job's directory goes first on sys.path: no job may share a module's name."""
    jobs = sorted(p.stem for p in (REPO / "jobs").glob("*.py"))
    assert jobs == sorted(Path(job_file(s)).stem for s in (*STAGE_NAMES, "run"))
    top_level = set(sys.stdlib_module_names) | {"pipeline", "tests", "bench"}
    top_level |= {m.name for m in __import__("pkgutil").iter_modules()}
    assert not [j for j in jobs if j in top_level]
