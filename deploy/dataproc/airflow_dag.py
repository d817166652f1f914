"""Airflow DAG (Cloud Composer) for a daily pipeline run on Dataproc.

Each run instantiates the workflow template that ``deploy/dataproc/workflow.sh import`` created: the
template's managed cluster is created for the run and deleted after it, so every day has a cluster
(a long-lived cluster deleted by ``--max-idle`` would leave the next run with nothing to run on).

The run date is pinned once per DAG run and passed as the template's ``RUN_DATE``: the complete day
before the run's scheduled time. The schedule is an explicit ``CronDataIntervalTimetable`` (not
``@daily``, whose meaning changed in Airflow 3: with the default ``CronTriggerTimetable`` a run's
logical date is its own, incomplete day). With the data-interval timetable, a run scheduled at
``D 03:00`` covers ``[D-1 03:00, D 03:00)`` in both Airflow 2 and 3, and reads
``raw/<source>/dt=<D-1>/`` and writes ``runs/<D-1>/``. A retry or backfill of a run recomputes only
its own date.

Copy this file to the Composer environment's ``dags/`` folder and set the Airflow Variables
``pretrain_project``, ``pretrain_region`` and ``pretrain_artifacts`` (``gs://BUCKET/PREFIX``, where
deploy/upload.sh staged jobs/, conf/ and dist/). Composer needs only the Google provider.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow import DAG
from airflow.providers.google.cloud.operators.dataproc import DataprocInstantiateWorkflowTemplateOperator
from airflow.timetables.interval import CronDataIntervalTimetable

TEMPLATE_ID = "pretrain-pipeline"
SCHEDULE_CRON = "0 3 * * *"  # 03:00 UTC: yesterday's partitions are complete by then
# The day before the end of the run's data interval: the last complete day at the scheduled time.
RUN_DATE = "{{ (data_interval_end - macros.timedelta(days=1)).strftime('%Y-%m-%d') }}"
CONFIG = "{{ var.value.pretrain_artifacts }}/conf/dataproc.yaml"

with DAG(
    dag_id="pretrain_pipeline_dataproc",
    description="Raw documents to Megatron training files, one run directory per day",
    schedule=CronDataIntervalTimetable(SCHEDULE_CRON, timezone="UTC"),
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": timedelta(minutes=10)},
    tags=["pretrain", "dataproc"],
) as dag:
    run_pipeline = DataprocInstantiateWorkflowTemplateOperator(
        task_id="run_pipeline",
        template_id=TEMPLATE_ID,
        project_id="{{ var.value.pretrain_project }}",
        region="{{ var.value.pretrain_region }}",
        parameters={"CONFIG": CONFIG, "RUN_DATE": RUN_DATE},
        # A rerun of the same date resumes: finished stages are skipped (docs/running.md, Resume).
        execution_timeout=timedelta(hours=12),
    )
