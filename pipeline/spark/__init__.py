"""Spark plumbing: starting a session, and where the run's Parquet tables live for Hadoop."""
