"""What a stage gets to work with: the config, the run directory, the manifest, a lazy SparkSession."""

from __future__ import annotations

from functools import cached_property

from pipeline import storage
from pipeline.config import PipelineConfig
from pipeline.run.manifest import Manifest


class RunContext:
    """Shared state of one pipeline invocation; Spark starts only when a stage first asks for it."""

    def __init__(self, config: PipelineConfig, spark=None) -> None:
        self.config = config
        self.run_dir = config.output
        self._spark = spark
        self.job_description: str | None = None  # what the Spark UI calls the jobs of the running stage

    def path(self, *parts: str) -> str:
        """A path inside the run directory."""
        return storage.join(self.run_dir, *parts)

    @cached_property
    def tables(self):
        """Where Spark reads and writes Parquet tables (see :mod:`pipeline.spark.tables`)."""
        from pipeline.spark.tables import TableStore

        return TableStore(self.run_dir, lambda: self.spark)

    def table(self, *parts: str) -> str:
        """The Hadoop-visible location of a Parquet table of the run (``documents``, ``dedup/edges``...).

        No I/O: a table an earlier process wrote is fetched by the runner (``Stage.reads``)."""
        return self.tables.path(*parts)

    @cached_property
    def manifest(self) -> Manifest:
        return Manifest(self.run_dir)

    @property
    def spark(self):
        if self._spark is None:
            from pipeline.spark.session import start_session

            cfg = self.config.spark
            self._spark = start_session(cfg.app_name, cfg.master, cfg.settings)
            self._spark.sparkContext.setLogLevel(cfg.log_level)
            checkpoints = cfg.checkpoint_dir or self.path("_checkpoints")
            self._spark.sparkContext.setCheckpointDir(self.tables.checkpoint_dir(checkpoints))
            if self.job_description:  # the stage that started Spark names its jobs (pipeline.logs.stage_jobs)
                self._spark.sparkContext.setJobDescription(self.job_description)
        return self._spark
