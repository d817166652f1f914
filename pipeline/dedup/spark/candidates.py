"""Exact-duplicate groups and LSH candidate edges (docs/dedup.md, Exact duplicates first; Edges).

Two plans give the same rows. The distributed one groups by content hash and by (band, key) in Spark
shuffles: a few Spark jobs each whatever the corpus's size. When the corpus has at most
``dedup.local_buckets_max_rows`` band rows (documents x bands), one task reads every document's
content hash and band keys and computes both with numpy (:func:`pipeline.dedup.batches.candidate_batches`);
nothing reaches the driver but the counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pipeline.dedup.batches import CANDIDATE_EDGE, EXACT_MEMBER, candidate_batches
from pipeline.dedup.plan import DedupPlan
from pipeline.logs import StepLog
from pipeline.spark.worker_task import per_task

CANDIDATE_TYPE = "kind byte, doc_id long, other long, short boolean"


@dataclass(frozen=True)
class Candidates:
    """What the exact pre-pass and the buckets found: ``groups`` (doc_id, rep, short) of the exact copies
    (None without the pre-pass), the star ``edges`` (src, dst), and their counts."""

    groups: DataFrame | None
    edges: DataFrame
    candidate_edges: int
    short_exact: int = 0
    exact_groups: int = 0
    exact_removed: int = 0
    persisted: tuple[DataFrame, ...] = ()  # to unpersist once the outputs are written


def exact_groups(features: DataFrame) -> DataFrame:
    """(doc_id, rep, short) for every document whose text occurs more than once; rep = best-ranked copy,
    short = the document has no band keys (fewer than ``min_tokens`` tokens)."""
    reps = features.groupBy("h1", "h2").agg(F.min("rank").alias("best"), F.count("*").alias("n")).where("n > 1")
    return features.join(reps, ["h1", "h2"]).select(
        "doc_id", F.col("best.doc_id").alias("rep"), F.col("keys").isNull().alias("short")
    )


def candidate_edges(band_df: DataFrame) -> DataFrame:
    """Star edges: every member of a bucket to the bucket's smallest doc_id (distinct, no self loops).

    One shuffle by (band, key) with the bucket's minimum as a window aggregate; a member is any row
    whose doc_id is not that minimum (so singleton buckets give nothing). The earlier min/count
    aggregate plus a join back to the rows shuffled the band rows twice and used more JVM CPU; gathering
    buckets with ``collect_list`` measured slower still (docs/benchmarks-history.md, Figures from the code).
    """
    bucket = Window.partitionBy("band", "key")
    rows = band_df.select("doc_id", F.min("doc_id").over(bucket).alias("head"))
    edges = rows.where(F.col("doc_id") != F.col("head"))
    return edges.select(F.col("doc_id").alias("src"), F.col("head").alias("dst")).distinct()


def find_candidates(features: DataFrame, documents: int, plan: DedupPlan, timer: StepLog) -> Candidates:
    """The exact groups and star edges of ``features`` (its ``documents`` rows), in one task when small."""
    if documents * plan.lsh.bands <= plan.local_buckets_max_rows:
        return _in_one_task(features, plan, timer)
    return _distributed(features, plan, timer)


def _distributed(features: DataFrame, plan: DedupPlan, timer: StepLog) -> Candidates:
    eligible = features.where(F.col("keys").isNotNull())
    groups, pool, counts = None, eligible, {}
    if plan.exact_prepass:  # over every document: exact copies of short documents are removed too
        timer.begin("exact_prepass")
        groups = exact_groups(features).persist()
        copy = F.col("doc_id") != F.col("rep")
        row = groups.agg(  # a global aggregate: one row
            F.count(F.when(copy & F.col("short"), 1)).alias("short_exact"),
            F.count(F.when(copy, 1)).alias("exact_removed"),
            F.count(F.when(~copy, 1)).alias("exact_groups"),  # one representative per group: no distinct
        ).collect()[0]
        counts = row.asDict()
        pool = eligible.join(groups.where(copy).select("doc_id"), "doc_id", "left_anti")
        timer.lap("exact_prepass", short_exact_duplicates=counts["short_exact"])
    timer.begin("buckets")
    bands = pool.select("doc_id", F.posexplode("keys").alias("band", "key"))
    edges = candidate_edges(bands).persist()
    candidates = edges.count()
    timer.lap("buckets", candidate_edges=candidates)
    persisted = (edges, groups) if groups is not None else (edges,)
    return Candidates(groups, edges, candidates, **counts, persisted=persisted)


def _in_one_task(features: DataFrame, plan: DedupPlan, timer: StepLog) -> Candidates:
    """Both in one task and one aggregate; the report's step times put that under ``exact_prepass``
    (``buckets`` then only names the rows), or under ``buckets`` without the pre-pass."""
    timer.begin("exact_prepass" if plan.exact_prepass else "buckets")
    exact_prepass = plan.exact_prepass
    found = (
        features.select("doc_id", "h1", "h2", "keys", "rank")
        .repartition(1)
        .mapInArrow(per_task(lambda it: candidate_batches(it, exact_prepass)), CANDIDATE_TYPE)
        .persist()
    )
    member, edge = F.col("kind") == EXACT_MEMBER, F.col("kind") == CANDIDATE_EDGE
    copy = member & (F.col("doc_id") != F.col("other"))
    row = found.agg(
        F.count(F.when(copy & F.col("short"), 1)).alias("short_exact"),
        F.count(F.when(copy, 1)).alias("exact_removed"),
        F.count(F.when(member & ~copy, 1)).alias("exact_groups"),
        F.count(F.when(edge, 1)).alias("candidate_edges"),
    ).collect()[0]
    counts = row.asDict()
    groups = None
    if exact_prepass:
        groups = found.where(member).select("doc_id", F.col("other").alias("rep"), "short")
        timer.lap("exact_prepass", short_exact_duplicates=counts["short_exact"])
        timer.begin("buckets")
    edges = found.where(edge).select(F.col("doc_id").alias("src"), F.col("other").alias("dst"))
    timer.lap("buckets", candidate_edges=counts["candidate_edges"])
    return Candidates(groups, edges, **counts, persisted=(found,))
