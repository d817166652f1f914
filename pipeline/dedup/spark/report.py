"""``dedup/report.json`` (docs/dedup.md, Report): counts, cluster-size histogram, largest clusters, parameters,
times."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pipeline import storage
from pipeline.dedup.plan import DedupPlan
from pipeline.spark.concurrent_queries import run_concurrently
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext

LARGEST = 5
EXAMPLES = 5


def build_report(
    ctx: RunContext,
    documents: str,
    components: DataFrame,
    plan: DedupPlan,
    times: dict,
    stats: dict,
    removed_for: dict[str, DataFrame] | None = None,
    sections: dict | None = None,
) -> dict:
    """Write the report and return it; ``report["counts"]`` goes into the manifest.

    ``removed_for`` maps further count keys (``contaminated``, ``duplicates_of_earlier_runs``) to the
    (doc_id, source) rows removed for that reason; ``sections`` are added to the report as they are.
    """
    removed_for = removed_for or {}
    keys = ("documents", "duplicates_removed", *removed_for, "survivors")
    sizes = components.groupBy("component").count()
    per_source, histogram, examples = run_concurrently(  # three independent small queries
        lambda: _counts_per_source(ctx, documents, components, removed_for, plan.sources, keys),
        lambda: _size_histogram(sizes),
        lambda: _largest_clusters(components, sizes),
    )
    total = {k: sum(e[k] for e in per_source.values()) for k in keys}
    counts = {"sources": per_source, **total, **stats}
    report = {
        "counts": counts,
        "cluster_size_histogram": histogram,
        "largest_clusters": examples,
        "parameters": plan.report_parameters(),
        "seconds": times,
        **(sections or {}),
    }
    storage.write_json(ctx.path("dedup", "report.json"), report)
    return report


def _counts_per_source(
    ctx: RunContext,
    documents: str,
    components: DataFrame,
    removed_for: dict[str, DataFrame],
    sources: tuple[str, ...],
    keys: tuple,
) -> dict[str, dict[str, int]]:
    """Documents, removals per reason and survivors of every source, from one query; survivors are counted from
    the written table, so documents = removed + survivors is a real check."""
    per_source = {name: {k: 0 for k in keys} for name in sources}
    tagged = [
        ctx.read_table(documents).select("source", F.lit("documents").alias("key")),
        components.where("doc_id != survivor").select("source", F.lit("duplicates_removed").alias("key")),
        *(frame.select("source", F.lit(key).alias("key")) for key, frame in removed_for.items()),
        ctx.read_table(layout.SURVIVORS).select("source", F.lit("survivors").alias("key")),
    ]
    for row in reduce(DataFrame.unionByName, tagged).groupBy("source", "key").count().collect():
        per_source[row["source"]][row["key"]] = row["count"]
    return per_source


def _size_histogram(sizes: DataFrame) -> dict[str, int]:
    """Clusters per size; sorted here, not by Spark (an orderBy is a sampling job and a shuffle more)."""
    by_size = sorted((r["count"], r["n"]) for r in sizes.groupBy("count").agg(F.count("*").alias("n")).collect())
    return {str(size): n for size, n in by_size}


def _largest_clusters(components: DataFrame, sizes: DataFrame) -> list[dict]:
    """The ``LARGEST`` largest clusters, each with its ``EXAMPLES`` smallest doc_ids."""
    largest = sizes.orderBy(F.desc("count"), "component").limit(LARGEST).collect()
    return [
        {"component": row["component"], "size": row["count"], "example_doc_ids": ids}
        for row, ids in zip(largest, _smallest_ids(components, [r["component"] for r in largest]), strict=True)
    ]


def _smallest_ids(components: DataFrame, wanted: list[int]) -> list[list[int]]:
    """The ``EXAMPLES`` smallest doc_ids of each component in ``wanted`` (in that order), in one Spark job."""
    if not wanted:
        return []
    rank = F.row_number().over(Window.partitionBy("component").orderBy("doc_id"))
    chosen = components.where(F.col("component").isin(wanted)).select("component", "doc_id", rank.alias("rank"))
    ids: dict[int, list[int]] = {c: [] for c in wanted}
    for row in chosen.where(F.col("rank") <= EXAMPLES).collect():
        ids[row["component"]].append(row["doc_id"])
    return [sorted(ids[c]) for c in wanted]


CANDIDATE_BINS = 20  # Jaccard bins of width 1/20 over [0, 1]; exactly 1.0 counts in the last bin


def verified_edge_figures(edges: DataFrame, threshold: float) -> tuple[int, list[int]]:
    """(edges at or above ``threshold``, candidate pairs per exact-Jaccard bin ``[i/CANDIDATE_BINS,
    (i+1)/CANDIDATE_BINS)`` before the threshold), from one aggregate; exactly 1.0 counts in the last bin.

    The histogram is what the LSH S-curve let through, for the report (``report.json`` ``dedup.lsh``)."""
    jaccard = F.col("jaccard")
    binned = F.least(F.floor(jaccard * CANDIDATE_BINS), F.lit(CANDIDATE_BINS - 1))
    row = edges.agg(
        F.count(F.when(jaccard >= threshold, 1)).alias("kept"),
        *(F.count(F.when(binned == i, 1)).alias(f"bin{i}") for i in range(CANDIDATE_BINS)),
    ).collect()[0]
    return row["kept"], [row[f"bin{i}"] for i in range(CANDIDATE_BINS)]
