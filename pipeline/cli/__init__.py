"""The command line (``python -m pipeline``), the scheduled jobs' entry (``--date``) and ``inspect``."""
