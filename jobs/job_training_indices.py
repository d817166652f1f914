"""spark-submit entry point for the training-indices stage (docs/running.md, On a cluster); all logic lives in the
`pipeline` package.

    spark-submit --py-files pretrain_pipeline.zip jobs/job_training_indices.py --config CONFIG
        [--date YYYY-MM-DD] [--set k=v ...]
"""

from pipeline.cli.schedule import job_main

if __name__ == "__main__":
    raise SystemExit(job_main("training-indices"))
