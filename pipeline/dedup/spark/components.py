"""Connected components of the duplicate graph on Spark DataFrames (docs/dedup.md, Connected components).

Engine ``"star"``: the alternating large-star / small-star algorithm of Kiveris et al.,
"Connected Components in MapReduce and Beyond" (SoCC 2014), written with DataFrame operators only
(no RDDs of Python objects, no Python UDFs). Engine ``"graphframes"``: GraphFrames'
``connectedComponents()`` (see :mod:`pipeline.dedup.spark.graphframes`). Both label every node
with the smallest doc_id of its component.

Representation. Edges are kept oriented ``src > dst`` (larger id first), distinct, without self
loops. For a node ``u`` let ``m(u)`` be the minimum of ``u`` and its smaller neighbours; the node
table ``(node, m, indeg, outdeg)`` is one combinable aggregation over the edges.

* large-star maps every edge ``(a, b)`` to ``(a, m(b))``: each node links its larger neighbours to
  the minimum of its neighbourhood (a larger neighbour never lowers that minimum);
* small-star maps every edge ``(u, v)`` to ``(v, m(u))`` and adds ``(u, m(u))``: each node links
  itself and its smaller neighbours to their minimum.

Convergence. The edge set is a fixed point of a round (large-star then small-star change no edge)
exactly when it is a forest of stars: every node has at most one edge to a smaller node, and no
node has edges both to a smaller and from a larger node. (If some ``(a, b)`` had ``b`` linked to a
smaller node, large-star would rewrite it; if some ``v`` had two smaller neighbours, small-star
would link the larger one to the smaller.) Both conditions are sums over the node table that the
next large-star needs anyway, so one aggregate row per round reaches the driver, never an edge
(docs/dedup.md, Connected components). At that point ``m`` is the component minimum for every node: the labels.

Lineage. Each step's output is persisted and re-rooted as a one-node plan (:func:`freeze`; a step
joins the edges with an aggregate of themselves, so plans would otherwise grow exponentially), and
released once its successor is materialized. Every ``checkpoint_interval`` rounds the edges are
checkpointed (reliable ``DataFrame.checkpoint()`` when the SparkContext has a checkpoint directory,
else ``localCheckpoint()``), which truncates the RDD lineage. Reliable checkpoint files are left to
Spark's cleaner (``spark.cleaner.referenceTracking.cleanCheckpoints=true`` removes them).

Skew. A giant star (one node with 10^5+ neighbours) would put one key's rows on one task in three
places: (1) the node-table aggregation, which is combinable (min/sum/count), so Spark's partial
aggregation reduces a hub to one row per map partition before the shuffle; (2) the de-duplication of
new edges, which is keyed by the whole ``(src, dst)`` pair, so a hub's edges spread over all
partitions; (3) the join that attaches ``m`` to each edge, keyed by the edge's ``dst`` (large-star)
or ``src`` (small-star). For (3) the round's aggregate also returns the maximum in/out degree; when
it reaches ``hub_threshold`` the join is split (:func:`hub_split_join`): edges whose key is a hub get
``m`` from a broadcast of the hub rows (at most ``2 * |E| / hub_threshold`` rows, one per hub, never
edges) inside their own partitions, and only the remaining edges, none with a hot key, are
shuffled. Spark's AQE skew-join splitting remains a second line of defence on clusters.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipeline.dedup.spark.edges import (
    DEFAULT_HUB_THRESHOLD,
    cut_lineage,
    freeze,
    hub_split_join,
    normalize_edges,
)
from pipeline.dedup.spark.graphframes import graphframes_components

log = logging.getLogger(__name__)

ENGINES = ("star", "graphframes")


@dataclass(frozen=True)
class StarResult:
    """Labels ``(doc_id, component)`` and the number of large-star + small-star rounds run."""

    labels: DataFrame
    rounds: int


def connected_components(
    edges: DataFrame,
    engine: str = "star",
    checkpoint_interval: int = 3,
    max_iterations: int = 100,
    hub_threshold: int = DEFAULT_HUB_THRESHOLD,
) -> DataFrame:
    """Label each node of ``edges`` (src, dst: long; undirected) with its component's smallest id.

    Returns ``(doc_id: long, component: long)``, one row per node that appears in any edge.
    Duplicate edges, both directions and self loops are allowed; rows with a null end are ignored.
    """
    _check_args(engine, checkpoint_interval, max_iterations, hub_threshold)
    if engine == "graphframes":
        return graphframes_components(edges, checkpoint_interval=checkpoint_interval, hub_threshold=hub_threshold)
    return star_components(edges, checkpoint_interval, max_iterations, hub_threshold).labels


def star_components(
    edges: DataFrame,
    checkpoint_interval: int = 3,
    max_iterations: int = 100,
    hub_threshold: int = DEFAULT_HUB_THRESHOLD,
) -> StarResult:
    """Run alternating large-star / small-star rounds until the edges form a star forest."""
    _check_args("star", checkpoint_interval, max_iterations, hub_threshold)
    base = cut_lineage(normalize_edges(edges))
    loops = base.filter(F.col("src") == F.col("dst")).select(F.col("src").alias("doc_id"))
    current, frozen = base.filter(F.col("src") != F.col("dst")), None
    behind: list[DataFrame] = []  # persisted frames the newest materialized ones were built from
    rounds = 0
    while True:
        nodes = node_table(current).persist()
        stats = nodes.agg(
            F.sum(_unsettled().cast("long")).alias("unsettled"),
            F.max("indeg").alias("max_indeg"),
        ).first()
        assert stats is not None  # an aggregate always has one row
        _release(behind)
        behind = [f for f in (frozen, nodes) if f is not None]
        if not stats["unsettled"]:
            break
        if rounds >= max_iterations:
            _release(behind)
            raise RuntimeError(
                f"connected components did not converge in {max_iterations} rounds "
                f"({stats['unsettled']} nodes not yet in a star); raise max_iterations"
            )
        rounds += 1
        large, large_frozen = freeze(large_star(current, nodes, _hubs(stats["max_indeg"], hub_threshold)))
        large_nodes = node_table(large).persist()
        max_row = large_nodes.agg(F.max("outdeg")).first()
        assert max_row is not None  # an aggregate always has one row
        max_out = max_row[0]
        _release(behind)
        behind = [large_frozen, large_nodes]
        small = small_star(large, large_nodes, _hubs(max_out, hub_threshold))
        if rounds % checkpoint_interval == 0:
            current, frozen = cut_lineage(small), None
        else:
            current, frozen = freeze(small)
        log.info("connected components: round %d done, %s nodes were unsettled", rounds, stats["unsettled"])
    labels = (
        nodes.select(F.col("node").alias("doc_id"), F.col("m").alias("component"))
        .unionByName(loops.select("doc_id", F.col("doc_id").alias("component")))
        .groupBy("doc_id")
        .agg(F.min("component").alias("component"))
    )
    labels = cut_lineage(labels)
    _release(behind)
    log.info("connected components converged after %d rounds", rounds)
    return StarResult(labels=labels, rounds=rounds)


def node_table(edges: DataFrame) -> DataFrame:
    """``(node, m, indeg, outdeg)`` of oriented edges; ``m`` = min of the node and its smaller neighbours.

    One scan and one combinable aggregation: each edge contributes ``(src, dst, out)`` and
    ``(dst, dst, in)``.
    """
    per_end = edges.select(
        F.inline(
            F.array(
                F.struct(F.col("src").alias("node"), F.col("dst").alias("cand"), F.lit(0).alias("inc")),
                F.struct(F.col("dst").alias("node"), F.col("dst").alias("cand"), F.lit(1).alias("inc")),
            )
        )
    )
    return (
        per_end.groupBy("node")
        .agg(F.min("cand").alias("m"), F.sum("inc").alias("indeg"), F.count(F.lit(1)).alias("deg"))
        .select(
            "node",
            "m",
            F.col("indeg").cast("long").alias("indeg"),
            (F.col("deg") - F.col("indeg")).cast("long").alias("outdeg"),
        )
    )


def large_star(edges: DataFrame, nodes: DataFrame, hub_threshold: int | None) -> DataFrame:
    """Map every edge ``(a, b)`` to ``(a, m(b))``; distinct. ``hub_threshold`` splits hot ``b``."""
    table = nodes.select(F.col("node").alias("dst"), "m", "indeg")
    is_hub = None if hub_threshold is None else F.col("indeg") >= hub_threshold
    joined = hub_split_join(edges, "dst", table, ["m"], is_hub)
    return joined.select("src", F.col("m").alias("dst")).distinct()


def small_star(edges: DataFrame, nodes: DataFrame, hub_threshold: int | None) -> DataFrame:
    """Map every edge ``(u, v)`` to ``(v, m(u))``, add ``(u, m(u))``; drop self loops, distinct."""
    table = nodes.select(F.col("node").alias("src"), "m", "outdeg")
    is_hub = None if hub_threshold is None else F.col("outdeg") >= hub_threshold
    joined = hub_split_join(edges, "src", table, ["m"], is_hub)
    relinked = joined.select(F.col("dst").alias("src"), F.col("m").alias("dst"))
    centres = nodes.filter(F.col("outdeg") > 0).select(F.col("node").alias("src"), F.col("m").alias("dst"))
    return relinked.unionByName(centres).filter(F.col("src") != F.col("dst")).distinct()


def _unsettled() -> Column:
    """True for a node that keeps the edges from being a star forest."""
    return (F.col("outdeg") > 1) | ((F.col("outdeg") > 0) & (F.col("indeg") > 0))


def _hubs(max_degree: int | None, hub_threshold: int) -> int | None:
    """``hub_threshold`` when some node reaches it this round, else None (plain shuffle join)."""
    return hub_threshold if max_degree is not None and max_degree >= hub_threshold else None


def _release(frames: list[DataFrame]) -> None:
    for frame in frames:
        frame.unpersist()


def _check_args(engine: str, checkpoint_interval: int, max_iterations: int, hub_threshold: int) -> None:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if checkpoint_interval < 1:
        raise ValueError(f"checkpoint_interval must be >= 1, got {checkpoint_interval}")
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    if hub_threshold < 1:
        raise ValueError(f"hub_threshold must be >= 1, got {hub_threshold}")
