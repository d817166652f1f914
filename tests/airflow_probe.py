"""Run inside an environment with Apache Airflow and its Google provider (tests/e2e/test_deploy_airflow.py):
import the DAG file, take its first two scheduled runs from 2026-11-20 on, and print, as JSON, what
each run would pass to Dataproc (the task's templated fields rendered for that run)."""

from __future__ import annotations

import importlib.util
import json
import sys
import types


def main(dag_file: str) -> None:
    import airflow
    import pendulum
    from airflow.timetables.base import TimeRestriction

    try:
        from airflow.sdk.execution_time import macros  # Airflow 3
    except ImportError:
        from airflow import macros  # Airflow 2

    spec = importlib.util.spec_from_file_location("pretrain_dag", dag_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dag = module.dag
    restriction = TimeRestriction(earliest=pendulum.datetime(2026, 11, 20, tz="UTC"), latest=None, catchup=True)
    runs, last = [], None
    for _ in range(2):
        info = dag.timetable.next_dagrun_info(last_automated_data_interval=last, restriction=restriction)
        last = info.data_interval
        context = {
            "data_interval_start": last.start,
            "data_interval_end": last.end,
            "macros": macros,
            "ds": last.start.strftime("%Y-%m-%d"),
            "var": {
                "value": types.SimpleNamespace(
                    pretrain_artifacts="gs://bkt/pretrain", pretrain_project="proj", pretrain_region="us-central1"
                )
            },
        }
        tasks = {}
        for task in dag.tasks:
            tasks[task.task_id] = {
                "operator": type(task).__name__,
                "template_id": task.render_template(task.template_id, context),
                "project_id": task.render_template(task.project_id, context),
                "parameters": task.render_template(task.parameters, context),
                "trigger_rule": str(task.trigger_rule),
            }
        runs.append({"run_after": info.run_after.isoformat(), "tasks": tasks})
    print(json.dumps({"airflow": airflow.__version__, "timetable": type(dag.timetable).__name__, "runs": runs}))


if __name__ == "__main__":
    main(sys.argv[1])
