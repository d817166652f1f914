"""The filter stage's Spark glue beside ``stage.py``: re-deciding from ``filter/signals/`` (redecide.py)."""
