"""deploy/emr/run.sh end to end with the real AWS CLI (PyPI ``awscli``) against moto's EMR/IAM server
on 127.0.0.1: the cluster it creates and the steps it adds are read back with the CLI itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli.schedule import job_file
from pipeline.run.registry import STAGE_NAMES
from tests.storage_fixtures import free_port, start_moto_server

REPO = Path(__file__).resolve().parents[2]
RUN_SH = REPO / "deploy" / "emr" / "run.sh"
VENV_BIN = Path(sys.executable).parent
REGION = "us-east-1"


@pytest.fixture
def moto_env(tmp_path):
    """A moto server on a free local port, and an environment pointing the AWS CLI at it."""
    port = free_port()
    server = start_moto_server(port)  # with AWS-managed policies (AmazonElasticMapReduceRole, ...)
    # The CLI from the test environment (its `aws` and its python3 with PyYAML go first on PATH).
    assert (VENV_BIN / "aws").exists(), f"the AWS CLI is not installed in {VENV_BIN} (test extra 'awscli')"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION=REGION,
        AWS_CONFIG_FILE=str(tmp_path / "no-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials"),
    )
    try:
        yield env
    finally:
        server.stop()


def _bash(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(RUN_SH), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def _aws(env: dict[str, str], *args: str) -> dict:
    done = subprocess.run(["aws", *args, "--output", "json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _create_default_roles(env: dict[str, str]) -> None:
    for role, service, policy in (
        ("EMR_DefaultRole", "elasticmapreduce.amazonaws.com", "service-role/AmazonElasticMapReduceRole"),
        ("EMR_EC2_DefaultRole", "ec2.amazonaws.com", "service-role/AmazonElasticMapReduceforEC2Role"),
    ):
        trust = {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": service}}],
        }
        _aws(env, "iam", "create-role", "--role-name", role, "--assume-role-policy-document", json.dumps(trust))
        subprocess.run(
            [
                "aws",
                "iam",
                "attach-role-policy",
                "--role-name",
                role,
                "--policy-arn",
                f"arn:aws:iam::aws:policy/{policy}",
            ],
            env=env,
            check=True,
            timeout=120,
        )
    _aws(env, "iam", "create-instance-profile", "--instance-profile-name", "EMR_EC2_DefaultRole")
    subprocess.run(
        [
            "aws",
            "iam",
            "add-role-to-instance-profile",
            "--instance-profile-name",
            "EMR_EC2_DefaultRole",
            "--role-name",
            "EMR_EC2_DefaultRole",
        ],
        env=env,
        check=True,
        timeout=120,
    )


def test_run_sh_creates_a_cluster_and_adds_the_days_steps(moto_env):
    env = moto_env
    # A fresh account: no EMR roles yet. create says what to do instead of failing inside AWS.
    done = _bash(env, "create", "--bucket", "bkt", "--region", REGION)
    assert done.returncode == 1 and "aws emr create-default-roles" in done.stderr, done.stderr
    assert _aws(env, "emr", "list-clusters", "--region", REGION)["Clusters"] == []

    # What `aws emr create-default-roles` makes (that command resolves its service principal from the
    # real EMR host name, so it cannot run against a local endpoint): the roles and the instance profile.
    _create_default_roles(env)
    done = _bash(env, "create", "--bucket", "bkt", "--region", REGION, "--wheelhouse")
    assert done.returncode == 0, done.stderr
    cluster_id = json.loads(done.stdout)["ClusterId"]

    cluster = _aws(env, "emr", "describe-cluster", "--cluster-id", cluster_id, "--region", REGION)["Cluster"]
    assert cluster["ReleaseLabel"] == "emr-7.13.0"
    assert [a["Name"] for a in cluster["Applications"]] == ["Spark"]
    assert cluster["ServiceRole"] == "EMR_DefaultRole"
    assert cluster["Ec2InstanceAttributes"]["IamInstanceProfile"] == "EMR_EC2_DefaultRole"
    classifications = {c["Classification"]: c for c in cluster["Configurations"]}
    assert classifications["spark-defaults"]["Properties"]["spark.executor.cores"] == "4"
    env_export = classifications["spark-env"]["Configurations"][0]
    assert env_export["Properties"]["PYSPARK_PYTHON"] == "/usr/bin/python3.11"
    # The CLI has no list-bootstrap-actions: the same API through boto3.
    import boto3

    emr = boto3.client(
        "emr",
        region_name=REGION,
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    (bootstrap,) = emr.list_bootstrap_actions(ClusterId=cluster_id)["BootstrapActions"]
    assert bootstrap["ScriptPath"] == "s3://bkt/pretrain/deploy/emr/bootstrap.sh"
    assert bootstrap["Args"] == ["--dist", "s3://bkt/pretrain/dist", "--wheelhouse"]

    for date in ("2026-11-21", "2026-11-22"):
        done = _bash(env, "steps", "--bucket", "bkt", "--cluster-id", cluster_id, "--date", date, "--region", REGION)
        assert done.returncode == 0, done.stderr
    steps = _aws(env, "emr", "list-steps", "--cluster-id", cluster_id, "--region", REGION)["Steps"]
    steps = steps[::-1]  # ListSteps returns the newest first
    assert len(steps) == 2 * len(STAGE_NAMES)
    expected = [(date, stage) for date in ("2026-11-21", "2026-11-22") for stage in STAGE_NAMES]
    for (date, stage), step in zip(expected, steps, strict=True):
        config = step["Config"]
        args = config["Args"]
        assert config["Jar"] == "command-runner.jar" and args[0] == "spark-submit"
        assert step["ActionOnFailure"] == "CANCEL_AND_WAIT"
        assert f"s3://bkt/pretrain/{job_file(stage)}" in args
        assert args[args.index("--py-files") + 1] == "s3://bkt/pretrain/dist/pretrain_pipeline.zip"
        assert args[args.index("--config") + 1] == "s3://bkt/pretrain/conf/emr.yaml"
        assert args[args.index("--date") + 1] == date
        assert step["Name"] == f"pretrain {stage} {date}"


def test_run_sh_refuses_a_bad_date(moto_env):
    done = _bash(moto_env, "steps", "--bucket", "b", "--cluster-id", "j-1", "--date", "22/11/2026")
    assert done.returncode == 2 and "YYYY-MM-DD" in done.stderr
