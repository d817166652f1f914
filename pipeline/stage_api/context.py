"""What a stage gets to work with: the config, the run directory, its tables and a lazy SparkSession. It carries
nothing from one stage to the next: a stage's inputs come from the runner, as its declarations say
(:mod:`pipeline.stage_api.stage`)."""

from __future__ import annotations

from functools import cached_property

from pipeline import storage
from pipeline.config import PipelineConfig
from pipeline.spark.session import start_session
from pipeline.spark.tables import TableStore, forward_store_env
from pipeline.stage_api import layout


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
    def tables(self) -> TableStore:
        """How the run's Parquet tables are read and written (see :mod:`pipeline.spark.tables`)."""
        return TableStore(self.run_dir, lambda: self.spark)

    def table(self, name: str) -> str:
        """The directory of a Parquet table of the run (a :mod:`~pipeline.stage_api.layout` name; no I/O)."""
        return self.tables.path(*layout.parts(name))

    def read_table(self, name: str):
        """A Parquet table of the run (a :mod:`~pipeline.stage_api.layout` name) as a DataFrame."""
        return self.tables.read(*layout.parts(name))

    def write_table(self, frame, name: str) -> None:
        """Write ``frame`` as the run's table ``name`` (a :mod:`~pipeline.stage_api.layout` name), replacing it."""
        self.tables.write(frame, *layout.parts(name))

    @property
    def spark(self):
        if self._spark is None:
            cfg = self.config.spark
            self._spark = start_session(cfg.app_name, cfg.master, cfg.settings, cfg.speedups)
            self._spark.sparkContext.setLogLevel(cfg.log_level)
            forward_store_env(self._spark)  # before any task function exists: each carries the environment
            checkpoints = cfg.checkpoint_dir or self.path("_checkpoints")
            placed = self.tables.checkpoint_dir(checkpoints)
            if placed is not None:
                self._spark.sparkContext.setCheckpointDir(placed)
            if self.job_description:  # the stage that started Spark names its jobs (pipeline.logs.stage_jobs)
                self._spark.sparkContext.setJobDescription(self.job_description)
        return self._spark
