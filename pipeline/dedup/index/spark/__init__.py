"""The dedup index's Spark glue: its generation tables, the lookup of a run's documents, the commit."""
