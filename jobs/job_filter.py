"""spark-submit entry point for the filter stage (docs/running.md, On a cluster); all logic lives in the `pipeline`
package.

    spark-submit --py-files pretrain_pipeline.zip jobs/job_filter.py --config CONFIG
        [--date YYYY-MM-DD] [--set k=v ...]
"""

from pipeline.cli.schedule import job_main

if __name__ == "__main__":
    raise SystemExit(job_main("filter"))
