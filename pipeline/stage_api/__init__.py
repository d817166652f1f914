"""The stage API, below every stage: the run context, the stage contract, the run directory's layout and the
Filter contract. It imports no stage and nothing of the runner (``pipeline.run``)."""
