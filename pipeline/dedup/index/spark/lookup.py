"""Which of this run's documents are near duplicates of indexed documents (docs/dedup_index.md, Lookup).

Candidates share a band key with an indexed document: a join on (band, key) between this run's band
rows and the index's, planned as a sort-merge join so the index is never collected to the driver.
With ``dedup.verify`` a candidate stays only if the exact Jaccard of the two shingle sets is >=
``dedup.threshold``; with ``dedup.exact_prepass`` an identical text (same 128-bit content hash) is a
match whatever its length, as within a run.
"""

from __future__ import annotations

from dataclasses import asdict

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline import storage
from pipeline.dedup.batches import LshParams
from pipeline.dedup.index.batches import MATCH_DDL, pair_jaccards
from pipeline.dedup.index.head import DedupIndexError, Head, check_location, check_parameters, read_head
from pipeline.dedup.index.spark.tables import generation_dirs, live_tables
from pipeline.dedup.plan import DedupPlan
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext


def index_parameters(p: LshParams) -> dict:
    """The MinHash parameters an index is tied to (its band keys and shingles depend on them): every field."""
    return asdict(p)


def run_key(ctx: RunContext) -> str:
    """What identifies a run in the index: its run directory (a rerun of the same directory replaces it)."""
    return ctx.run_dir.rstrip("/")


def open_index(index: str, p: LshParams) -> Head | None:
    """HEAD of the index after checking its parameters (None for an index not created yet)."""
    head, _ = read_head(index)
    if head is not None:
        check_parameters(head, index_parameters(p), index)
    return head


def runs_looked_up(index: str, p: LshParams, run: str) -> list[str]:
    """The indexed runs ``run``'s documents are matched against (docs/dedup_index.md, Order)."""
    head = open_index(index, p)
    return [] if head is None else head.runs_before(run)


LOOKUP_ATTEMPTS = 3  # lookups started again when HEAD moved under one (a compaction or a recommit)


def match_index(
    ctx: RunContext, features: DataFrame, docs: DataFrame, plan: DedupPlan
) -> tuple[DataFrame | None, list[str]]:
    """Write ``dedup/earlier_matches/`` (doc_id, index_run, index_doc_id, jaccard); return it (None when no run
    is looked up) and the runs looked up.

    ``features``: (doc_id, h1, h2, keys) of this run's documents; ``docs``: (doc_id, text). A compaction or a
    recommit publishing while the lookup reads may delete a generation it is reading: the lookup then sees HEAD
    moved and starts again from the new HEAD (up to :data:`LOOKUP_ATTEMPTS` times, then one line naming the
    index), as compaction does under a commit (docs/dedup_index.md, Maintenance).
    """
    index, p = plan.index, plan.lsh
    if index is None:
        return None, []
    for _ in range(LOOKUP_ATTEMPTS):
        head, version = read_head(index)
        if head is not None:
            check_parameters(head, index_parameters(p), index)
        earlier = [] if head is None else head.runs_before(run_key(ctx))
        if head is None or not earlier:
            return None, []
        try:
            ctx.write_table(_matches(ctx, features, docs, plan, head, earlier), layout.EARLIER_MATCHES)
        except Exception:  # noqa: BLE001 - a generation deleted under the read, or a real failure: HEAD tells
            if read_head(index)[1] == version:
                raise
            continue
        return ctx.read_table(layout.EARLIER_MATCHES), earlier
    raise DedupIndexError(
        f"dedup index {index}: HEAD changed {LOOKUP_ATTEMPTS} times while this run looked it up (compactions or "
        "commits deleting the generations it read); nothing was removed; rerun when the index is quiet"
    )


def _matches(
    ctx: RunContext, features: DataFrame, docs: DataFrame, plan: DedupPlan, head: Head, earlier: list[str]
) -> DataFrame:
    """The matches of this run's documents among the runs ``earlier`` of ``head`` (the plan of :func:`match_index`)."""
    index, p = plan.index, plan.lsh
    assert index is not None
    spark = ctx.spark
    idx_bands, idx_docs = live_tables(spark, index, head, earlier)
    mine = features.where(F.col("keys").isNotNull()).select("doc_id", F.posexplode("keys").alias("band", "key"))
    theirs = idx_bands.select("band", "key", F.col("run").alias("index_run"), F.col("doc_id").alias("index_doc_id"))
    candidates = (
        mine.join(theirs.hint("merge"), ["band", "key"]).select("doc_id", "index_run", "index_doc_id").distinct()
    )
    if plan.verify:
        texts = idx_docs.select(
            F.col("run").alias("index_run"), F.col("doc_id").alias("index_doc_id"), F.col("text").alias("index_text")
        )
        pairs = candidates.join(docs.select("doc_id", "text"), "doc_id").join(
            texts.hint("merge"), ["index_run", "index_doc_id"]
        )
        near = pairs.select("doc_id", "text", "index_run", "index_doc_id", "index_text").mapInArrow(
            per_task(lambda it: pair_jaccards(iter(it), p.ngram, p.shingle, p.max_shingles, plan.threshold)), MATCH_DDL
        )
    else:
        near = candidates.withColumn("jaccard", F.lit(None).cast("double"))
    matches = near
    if plan.exact_prepass:
        same = features.select("doc_id", "h1", "h2").join(
            idx_docs.select(F.col("run").alias("index_run"), F.col("doc_id").alias("index_doc_id"), "h1", "h2").hint(
                "merge"
            ),
            ["h1", "h2"],
        )
        matches = matches.unionByName(same.select("doc_id", "index_run", "index_doc_id", F.lit(1.0).alias("jaccard")))
    return matches.groupBy("doc_id", "index_run", "index_doc_id").agg(F.max("jaccard").alias("jaccard"))


def require_index_usable(index: str, p: LshParams) -> None:
    """Fail before any Spark work when the index's place cannot hold an index, its HEAD is unreadable or has other
    parameters, or a generation HEAD maps a run to is missing."""
    check_location(index)
    try:
        head = open_index(index, p)
        live = sorted(head.live_generations()) if head is not None else []
        present = set(generation_dirs(index)) if live else set()
    except DedupIndexError:
        raise
    except OSError as exc:
        raise DedupIndexError(f"cannot read dedup index {index}: {type(exc).__name__}: {exc}") from None
    missing = [g for g in live if g not in present]
    if missing:
        raise DedupIndexError(
            f"dedup index {index}: HEAD maps runs to generation {missing[0]}, missing from "
            f"{storage.join(index, 'generations')} (python -m pipeline index describe {index} lists them)"
        )
