"""Airflow DAG (Cloud Composer) for a daily pipeline run on Dataproc, one task per stage.

Copy this file to the Composer environment's ``dags/`` folder and set the Airflow Variables
``pretrain_project``, ``pretrain_region``, ``pretrain_cluster`` and ``pretrain_artifacts``
(``gs://BUCKET/PREFIX`` where deploy/upload.sh staged jobs/, conf/ and dist/). Each run passes its
logical date (``{{ ds }}``) as ``--date``: the job fills ``{date}`` in conf/dataproc.yaml through
``pipeline.schedule`` on the cluster, so a run reads ``raw/<source>/dt=<ds>/`` and writes
``runs/<ds>/`` without touching earlier runs, and a backfill or retry of a date recomputes only that
date. Composer itself needs only the Google provider, not this project's package.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow import DAG
from airflow.providers.google.cloud.operators.dataproc import DataprocSubmitJobOperator

STAGES = ("ingest", "dedup", "train-tokenizer", "tokenize", "merge-blend")
ARTIFACTS = "{{ var.value.pretrain_artifacts }}"
CONFIG = ARTIFACTS + "/conf/dataproc.yaml"


def pyspark_job(stage: str) -> dict:
    """The Dataproc job for one stage of the run dated ``{{ ds }}``."""
    return {
        "reference": {"project_id": "{{ var.value.pretrain_project }}"},
        "placement": {"cluster_name": "{{ var.value.pretrain_cluster }}"},
        "pyspark_job": {
            "main_python_file_uri": f"{ARTIFACTS}/jobs/job_{stage.replace('-', '_')}.py",
            "python_file_uris": [f"{ARTIFACTS}/dist/pretrain_pipeline.zip"],
            "args": ["--config", CONFIG, "--date", "{{ ds }}"],
        },
    }


with DAG(
    dag_id="pretrain_pipeline_dataproc",
    description="Raw documents to Megatron training files, one run directory per day",
    schedule="@daily",
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": timedelta(minutes=10)},
    tags=["pretrain", "dataproc"],
) as dag:
    previous = None
    for stage in STAGES:
        task = DataprocSubmitJobOperator(
            task_id=stage.replace("-", "_"),
            project_id="{{ var.value.pretrain_project }}",
            region="{{ var.value.pretrain_region }}",
            job=pyspark_job(stage),
        )
        if previous is not None:
            previous >> task
        previous = task
