"""spark-submit entry point for the train-classifier stage (docs/running.md, On a cluster); a no-op unless the config
has a `classifier` section (docs/stages.md, The train-classifier stage); all logic lives in the `pipeline` package.

    spark-submit --py-files pretrain_pipeline.zip jobs/job_train_classifier.py --config CONFIG
        [--date YYYY-MM-DD] [--set k=v ...]
"""

from pipeline.cli.schedule import job_main

if __name__ == "__main__":
    raise SystemExit(job_main("train-classifier"))
