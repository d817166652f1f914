"""Sources: reading raw input files into records or rejects with a reason (docs/bad_input.md, Records).

Split planning, the formats, record parsing, doc ids and the Arrow batches have no Spark import; the
shared Spark reader (ingest's sources, decontamination's references) is :mod:`pipeline.sources.spark.reader`.
"""

from pipeline.sources.doc_id import doc_id
from pipeline.sources.records import RejectReason

__all__ = ["RejectReason", "doc_id"]
