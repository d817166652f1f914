"""Decontamination's Spark glue: reading the references and finding the contaminated documents of a run."""
