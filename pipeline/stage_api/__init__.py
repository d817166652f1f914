"""The stage API, below every stage: the run context, the Stage base class, the run directory's layout, reading a
finished run's tables (run_tables) and the Filter contract. It imports no stage and nothing of the runner
(``pipeline.run``)."""
