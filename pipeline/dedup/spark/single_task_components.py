"""Connected components of a small edge table in one Spark task (docs/dedup.md, Connected components).

The distributed large/small-star engine costs a few Spark jobs per round whatever the graph's size. When the edge count
is at most ``dedup.local_components_max_edges`` (default 2,000,000: two int64 columns, 32 MB, a few hundred MB of numpy
temporaries at the peak in one Python worker), all edges go to one partition and one task labels them with
:func:`pipeline.dedup.batches.component_batches` (:func:`pipeline.dedup.union_find.component_labels` over the task's
Arrow batches). Edges never reach the driver (docs/running.md, Cluster and storage). The labels are the distributed
engine's: every node with the smallest doc_id of its component.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline.dedup.batches import component_batches
from pipeline.spark.worker_task import per_task

LABEL_SCHEMA = "doc_id long, component long"


def single_task_components(edges: DataFrame) -> DataFrame:
    """``(doc_id, component)`` for every node of ``edges`` (src, dst), computed in one task.

    Rows with a null end are ignored, as in :func:`pipeline.dedup.spark.components.connected_components`.
    """
    pairs = edges.select(F.col("src").cast("long"), F.col("dst").cast("long")).dropna()
    return pairs.repartition(1).mapInArrow(per_task(component_batches), LABEL_SCHEMA)
