"""The dedup index (docs/dedup_index.md, Index): every document earlier runs deduplicated, so scheduled runs
dedup across runs.

Removed duplicates are kept in the index too (``kept`` false): a new document near one of them is
a duplicate of earlier content even when it is below the threshold from that cluster's survivor,
exactly as in one run over all the days (what the quality test checks).

Layout under the index path (local directory, ``gs://`` or ``s3://``)::

    HEAD.json                       parameters, and which generation holds each run's documents
    generations/<id>/bands/         Parquet: band, key, run, doc_id (one row per band of a kept document)
    generations/<id>/docs/          Parquet: run, doc_id, source, kept, h1, h2, text (text: exact verification)

A generation is written aside first; it becomes part of the index only when ``HEAD.json`` is
replaced by one conditional write (:mod:`.head`). Readers take only the rows of runs that HEAD maps
to that generation, so a rerun's new generation supersedes its old rows without rewriting anything.
"""
