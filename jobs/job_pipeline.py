"""spark-submit entry point for the whole run, every stage in order (docs/running.md, On a cluster); logic lives in
`pipeline`.

    spark-submit --py-files pretrain_pipeline.zip jobs/job_pipeline.py --config CONFIG [--date YYYY-MM-DD]
        [--set k=v ...] [--force STAGE]
"""

from pipeline.cli.schedule import job_main

if __name__ == "__main__":
    raise SystemExit(job_main("run"))
