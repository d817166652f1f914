"""The Dataproc workflow template, as workflow.sh renders it for import, parsed by Google's own client
types (``google-cloud-dataproc``: ``dataproc_v1.WorkflowTemplate``, which refuses unknown fields)."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from pipeline.cli.schedule import job_file
from pipeline.config import load_config_text
from pipeline.run.registry import STAGE_NAMES

REPO = Path(__file__).resolve().parents[2]


def _rendered_template() -> dict:
    done = subprocess.run(
        ["bash", "deploy/dataproc/workflow.sh", "import", "--bucket", "bkt", "--dry-run"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout[: done.stdout.index("+ gcloud dataproc workflow-templates import")]
    return yaml.safe_load(text)


def _parse(data: dict):
    from google.cloud import dataproc_v1

    # The YAML gcloud imports uses the API's JSON names (camelCase): the proto's JSON mapping.
    return dataproc_v1.WorkflowTemplate.from_json(json.dumps(data))


def test_rendered_template_parses_as_a_workflow_template_with_a_managed_cluster():
    data = _rendered_template()
    template = _parse(data)
    placement = template.placement
    assert "managed_cluster" in placement and "cluster_selector" not in placement
    cluster = placement.managed_cluster
    assert cluster.cluster_name
    config = cluster.config
    assert config.gce_cluster_config.internal_ip_only
    assert config.gce_cluster_config.metadata["PIPELINE_DEPS"] == "wheelhouse"  # offline by default
    assert config.gce_cluster_config.metadata["PIPELINE_DIST"] == "gs://bkt/pretrain/dist"
    assert config.gce_cluster_config.metadata["PIPELINE_DATE_CLOCK"] == "cluster-creation"  # one date per run
    assert config.worker_config.machine_type_uri == "n2-highmem-8" and config.worker_config.num_instances >= 2
    assert config.software_config.image_version.startswith("2.2")
    (init,) = config.initialization_actions
    assert init.executable_file == "gs://bkt/pretrain/deploy/dataproc/init_install_deps.sh"
    assert (REPO / "deploy" / "dataproc" / "init_install_deps.sh").is_file()
    # The cluster gets the config's Spark settings (static ones cannot change once Spark runs).
    conf_settings = load_config_text((REPO / "conf" / "dataproc.yaml").read_text(), [], origin="dataproc.yaml")
    props = dict(config.software_config.properties)
    for key, value in conf_settings.spark.settings.items():
        assert props[f"spark:{key}"] == str(value).replace("YOUR_BUCKET", "bkt")

    jobs = list(template.jobs)
    assert [j.step_id for j in jobs] == list(STAGE_NAMES)
    for previous, job in zip(jobs, jobs[1:], strict=False):
        assert list(job.prerequisite_step_ids) == [previous.step_id]
    for job in jobs:
        spark = job.pyspark_job
        assert spark.main_python_file_uri == f"gs://bkt/pretrain/{job_file(job.step_id)}"
        assert (REPO / job_file(job.step_id)).is_file()
        assert list(spark.python_file_uris) == ["gs://bkt/pretrain/dist/pretrain_pipeline.zip"]
        args = list(spark.args)
        assert args[args.index("--config") + 1] == "gs://bkt/pretrain/conf/dataproc.yaml"
    params = {p.name: p for p in template.parameters}
    assert set(params) == {"CONFIG", "RUN_DATE"}
    assert len(params["RUN_DATE"].fields) == len(jobs)


def test_unknown_fields_fail_to_parse():
    from google.protobuf.json_format import ParseError

    data = _rendered_template()
    _parse(data)
    typo = copy.deepcopy(data)
    typo["placement"]["managedCluster"]["config"]["workerConfig"]["machineType"] = "n2-highmem-8"
    with pytest.raises(ParseError):
        _parse(typo)
    old_selector = copy.deepcopy(data)
    old_selector["jobs"][0]["pysparkJob"]["mainPythonFile"] = "gs://x/job.py"
    with pytest.raises(ParseError):
        _parse(old_selector)


def _init_action(tmp_path: Path, metadata: dict[str, str]) -> Path:
    """Run init_install_deps.sh as a worker node would (PIPELINE_DEPS=env installs nothing there), with the
    metadata server replaced by a script printing ``metadata``; returns its /etc/pretrain-pipeline."""
    values = {"dataproc-role": "Worker", "PIPELINE_DIST": "gs://bkt/pretrain/dist", "PIPELINE_DEPS": "env", **metadata}
    tmp_path.mkdir(exist_ok=True)
    reader = tmp_path / "get_metadata_value"
    cases = "".join(f'  "attributes/{k}") echo "{v}" ;;\n' for k, v in values.items())
    reader.write_text(f'#!/usr/bin/env bash\ncase "$1" in\n{cases}  *) exit 1 ;;\nesac\n')
    reader.chmod(0o755)
    etc = tmp_path / "etc"
    env = {"PATH": "/usr/bin:/bin", "PIPELINE_METADATA_COMMAND": str(reader), "PIPELINE_ETC": str(etc)}
    script = REPO / "deploy" / "dataproc" / "init_install_deps.sh"
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return etc


def test_the_template_cluster_records_its_creation_for_relative_dates(tmp_path, monkeypatch):
    import datetime as dt

    from pipeline.cli import schedule

    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    etc = _init_action(tmp_path, {"PIPELINE_DATE_CLOCK": "cluster-creation"})
    monkeypatch.setattr(schedule, "CLOCK_FILE", str(etc / "date-clock"))
    recorded = schedule.utc_now()
    assert before <= recorded <= dt.datetime.now(dt.timezone.utc)
    assert schedule.resolve_date("yesterday") == (recorded.date() - dt.timedelta(days=1)).isoformat()
    assert not (_init_action(tmp_path / "long-lived", {}) / "date-clock").exists()  # create_cluster.sh's clusters
    assert "PIPELINE_DATE_CLOCK" not in (REPO / "deploy" / "dataproc" / "create_cluster.sh").read_text()
