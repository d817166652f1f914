"""Connected components of a small edge table on the driver (SPEC §4.5, issue #16).

The distributed large/small-star engine costs a few Spark jobs per round whatever the graph's size
(15 s for 405 edges). When the edge count is at most ``dedup.local_components_max_edges`` (default
2,000,000: two int64 columns, 32 MB collected, a few hundred MB of numpy temporaries at the peak),
the edges are collected as Arrow and labelled with :func:`pipeline.dedup.union_find.component_labels`.
The labels are the distributed engine's: every node with the smallest doc_id of its component.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline.dedup.union_find import component_labels

DEFAULT_MAX_EDGES = 2_000_000
LABEL_SCHEMA = "doc_id long, component long"


def collect_arrow(df: DataFrame) -> pa.Table:
    """``df`` as one Arrow table on the driver (``toArrow`` in Spark 4, the same internal call in 3.5)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    batches = df._collect_as_arrow()
    if not batches:
        return pa.table({name: pa.array([], pa.int64()) for name in df.columns})
    return pa.Table.from_batches(batches)


def driver_components(edges: DataFrame) -> DataFrame:
    """``(doc_id, component)`` for every node of ``edges`` (src, dst), computed on the driver.

    Rows with a null end are ignored, as in :func:`pipeline.dedup.components.connected_components`.
    """
    table = collect_arrow(edges.select(F.col("src").cast("long"), F.col("dst").cast("long")).dropna())
    src = table.column("src").to_numpy() if table.num_rows else np.zeros(0, np.int64)
    dst = table.column("dst").to_numpy() if table.num_rows else np.zeros(0, np.int64)
    nodes, labels = component_labels(src, dst)
    frame = pd.DataFrame({"doc_id": nodes, "component": labels})
    return edges.sparkSession.createDataFrame(frame, LABEL_SCHEMA)
