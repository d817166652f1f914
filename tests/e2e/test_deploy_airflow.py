"""The Cloud Composer DAG, imported by real Apache Airflow with the Google provider.

Airflow conflicts with this project's test environment, so it lives in its own virtualenv(s):
``PIPELINE_AIRFLOW_PYTHONS`` lists their interpreters (``os.pathsep``-separated, e.g. one with
Airflow 2 and one with Airflow 3). Without it, the current interpreter is used if it has Airflow;
otherwise the test skips and says how to provide one (in CI it fails: tests/oracles.py).
tests/airflow_probe.py runs inside each.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli.schedule import cli_argv
from tests.oracles import missing_oracle

REPO = Path(__file__).resolve().parents[2]
DAG_FILE = REPO / "deploy" / "dataproc" / "airflow_dag.py"
PROBE = REPO / "tests" / "airflow_probe.py"


def _airflow_pythons() -> list[str]:
    listed = [p for p in os.environ.get("PIPELINE_AIRFLOW_PYTHONS", "").split(os.pathsep) if p]
    if listed:
        return listed
    if importlib.util.find_spec("airflow") is not None:
        return [sys.executable]
    return []


PYTHONS = _airflow_pythons()


NO_AIRFLOW = (
    "no Apache Airflow: set PIPELINE_AIRFLOW_PYTHONS to the python of a venv with apache-airflow and "
    "apache-airflow-providers-google (it conflicts with the test venv)"
)


@pytest.mark.parametrize("python", PYTHONS or [None])
def test_dag_instantiates_the_template_for_the_previous_complete_day(python):
    if python is None:
        missing_oracle(NO_AIRFLOW)  # Airflow is the DAG's oracle: a failure in CI, a skip elsewhere
    done = subprocess.run([python, str(PROBE), str(DAG_FILE)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["timetable"] == "CronDataIntervalTimetable", report
    dates = []
    for run in report["runs"]:
        (task,) = run["tasks"].values()
        # The template's managed cluster exists for exactly this run.
        assert task["operator"] == "DataprocInstantiateWorkflowTemplateOperator"
        assert task["template_id"] == "pretrain-pipeline" and task["project_id"] == "proj"
        params = task["parameters"]
        assert params["CONFIG"] == "gs://bkt/pretrain/conf/dataproc.yaml"
        scheduled = dt.datetime.fromisoformat(run["run_after"])
        # The complete day before the scheduled time, whatever Airflow's version.
        assert params["RUN_DATE"] == (scheduled.date() - dt.timedelta(days=1)).isoformat(), (report["airflow"], run)
        dates.append(params["RUN_DATE"])
    first, second = (dt.date.fromisoformat(d) for d in dates)
    assert second - first == dt.timedelta(days=1)
    # Through the jobs' own date handling: each run reads its own day and writes its own run directory.
    config = REPO / "conf" / "dataproc.yaml"
    for date in dates:
        argv = cli_argv("ingest", ["--config", str(config), "--date", date])
        assert f'output="gs://YOUR_BUCKET/runs/{date}"' in argv
        assert any(a.startswith("sources.web.paths=") and f"dt={date}/" in a for a in argv)
