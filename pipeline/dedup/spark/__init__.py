"""The dedup stage's Spark glue (DataFrames, ``mapInArrow`` over :mod:`pipeline.dedup.batches`): connected
components and their engines, the edge tables, ``dedup/report.json``, the removals besides duplicates."""
