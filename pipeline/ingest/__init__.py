"""Ingest: raw files of each source -> ``documents/`` and ``rejects/`` (docs/stages.md, Stages;
docs/bad_input.md, Records).

The kernels here (split planning, record parsing, doc ids) have no Spark import; the Spark stage
is :mod:`pipeline.ingest.stage`.
"""

from pipeline.ingest.doc_id import doc_id
from pipeline.ingest.records import RejectReason

__all__ = ["RejectReason", "doc_id"]
