"""``dedup/report.json`` (docs/dedup.md, Report): counts, cluster-size histogram, largest clusters, parameters,
times."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline import storage
from pipeline.dedup.plan import DedupPlan
from pipeline.run.context import RunContext

LARGEST = 5
EXAMPLES = 5


def build_report(
    ctx: RunContext,
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
    docs = ctx.spark.read.parquet(ctx.table("documents"))
    keys = ("documents", "duplicates_removed", *removed_for, "survivors")
    per_source = {name: {k: 0 for k in keys} for name in plan.sources}
    for row in docs.groupBy("source").count().collect():
        per_source[row["source"]]["documents"] = row["count"]
    removed = components.where("doc_id != survivor")
    for row in removed.groupBy("source").count().collect():
        per_source[row["source"]]["duplicates_removed"] = row["count"]
    for key, frame in removed_for.items():
        for row in frame.groupBy("source").count().collect():
            per_source[row["source"]][key] = row["count"]
    # survivors counted from the written table, so documents = removed + survivors is a real check
    for row in ctx.spark.read.parquet(ctx.table("dedup", "survivors")).groupBy("source").count().collect():
        per_source[row["source"]]["survivors"] = row["count"]
    sizes = components.groupBy("component").count()
    histogram = {
        str(r["count"]): r["n"] for r in sizes.groupBy("count").agg(F.count("*").alias("n")).orderBy("count").collect()
    }
    largest = sizes.orderBy(F.desc("count"), "component").limit(LARGEST).collect()
    examples = []
    for row in largest:
        ids = (
            components.where(F.col("component") == row["component"])
            .select("doc_id")
            .orderBy("doc_id")
            .limit(EXAMPLES)
            .collect()
        )
        examples.append(
            {"component": row["component"], "size": row["count"], "example_doc_ids": [r["doc_id"] for r in ids]}
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


CANDIDATE_BINS = 20  # Jaccard bins of width 1/20 over [0, 1]; exactly 1.0 counts in the last bin


def candidate_jaccard_histogram(edges: DataFrame) -> list[int]:
    """Candidate pairs per exact-Jaccard bin ``[i/CANDIDATE_BINS, (i+1)/CANDIDATE_BINS)``, before the threshold.

    What the LSH S-curve let through, for the report (``report.json`` ``dedup.lsh``)."""
    binned = edges.where(F.col("jaccard").isNotNull()).select(
        F.least(F.floor(F.col("jaccard") * CANDIDATE_BINS), F.lit(CANDIDATE_BINS - 1)).cast("int").alias("bin")
    )
    counts = [0] * CANDIDATE_BINS
    for row in binned.groupBy("bin").count().collect():
        counts[row["bin"]] = row["count"]
    return counts
