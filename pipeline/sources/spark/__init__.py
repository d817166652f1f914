"""The Spark side of reading sources: one reader for ingest and for decontamination references."""
