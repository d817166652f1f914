"""Ingest: raw files of each source -> ``documents/`` and ``rejects/`` (docs/stages.md, Stages;
docs/bad_input.md, Records).

Reading the raw files is :mod:`pipeline.sources`; the Spark stage is :mod:`pipeline.ingest.stage`.
``doc_id`` and ``RejectReason`` stay importable from here.
"""

from pipeline.sources.doc_id import doc_id
from pipeline.sources.records import RejectReason

__all__ = ["RejectReason", "doc_id"]
