"""Spark glue of the ingest stage: the URL rule that needs every record of the run (latest capture)."""
