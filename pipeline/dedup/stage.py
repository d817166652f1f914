"""Spark dedup stage (docs/dedup.md): exact pre-pass, MinHash LSH, verified star edges, components, survivors."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, LongType, StructField, StructType

from pipeline import storage
from pipeline.blend.rehydrate import config_rules
from pipeline.config import ConfigError, PipelineConfig
from pipeline.config.schema import DecontaminateConfig
from pipeline.decontaminate.references import changed_references, reference_stamps
from pipeline.dedup.bands import optimal_bands
from pipeline.dedup.batches import LshParams, doc_features, star_jaccards
from pipeline.dedup.index.spark.commit import commit_run
from pipeline.dedup.index.spark.lookup import require_index_usable, run_key, runs_looked_up
from pipeline.dedup.numba_loader import kernel_groups, warm_in_background
from pipeline.dedup.plan import DedupPlan
from pipeline.dedup.report_html import report_html
from pipeline.dedup.report_section import report_section
from pipeline.dedup.spark.candidates import find_candidates
from pipeline.dedup.spark.components import connected_components
from pipeline.dedup.spark.edges import clear_checkpoints
from pipeline.dedup.spark.extra_removals import ExtraRemovals
from pipeline.dedup.spark.graphframes import require_graphframes
from pipeline.dedup.spark.report import build_report, verified_edge_figures
from pipeline.dedup.spark.single_task_components import single_task_components
from pipeline.logs import StepLog
from pipeline.numba_backend import numba_after
from pipeline.spark.session import runs_here
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, SourceTally, Stage, StageResult, source_tally
from pipeline.storage.parquet_footers import data_files

PAIR_TYPE = StructType(
    [StructField("src", LongType()), StructField("dst", LongType()), StructField("jaccard", DoubleType())]
)


def _rank_key(plan: DedupPlan):
    """Column ordering members of a cluster: the smallest is the survivor (docs/dedup.md, Survivors)."""
    if plan.survivor == "priority":
        prio = F.coalesce(*[F.when(F.col("source") == s, F.lit(-p)) for s, p in plan.priorities.items()], F.lit(0))
        return F.struct(prio.alias("r"), F.col("doc_id"))
    if plan.survivor == "longest":
        return F.struct((-F.length("text")).alias("r"), F.col("doc_id"))
    return F.struct(F.lit(0).alias("r"), F.col("doc_id"))


BROADCAST_EDGES = 2_000_000  # below this many candidate edges, their roles are broadcast to the documents


def verify_edges(edges: DataFrame, docs: DataFrame, p: LshParams, candidates: int) -> DataFrame:
    """(src, dst, exact Jaccard of their shingle sets) for every candidate (star) edge.

    With fewer than ``BROADCAST_EDGES`` candidates each text is shuffled once: the endpoint roles are
    broadcast to the documents, then rows travel to their star's head, sorted so the head comes
    first and its shingle set is computed once per star. Above it the roles join is a shuffle too.
    """
    members = edges.select(F.col("dst").alias("head"), F.lit(1).alias("role"), F.col("src").alias("doc_id"))
    heads = edges.select(F.col("dst").alias("head"), F.lit(0).alias("role"), F.col("dst").alias("doc_id")).distinct()
    roles = members.unionByName(heads)
    roles = F.broadcast(roles) if candidates < BROADCAST_EDGES else roles
    rows = roles.join(docs.select("doc_id", "text"), "doc_id").select("head", "role", "doc_id", "text")
    stars = rows.repartition("head").sortWithinPartitions("head", "role")
    return stars.mapInArrow(per_task(lambda it: star_jaccards(iter(it), p.ngram, p.shingle, p.max_shingles)), PAIR_TYPE)


FEATURE_TYPE = "doc_id long, ntokens long, h1 long, h2 long, keys array<long>"


def run_dedup(ctx: RunContext, documents: str) -> dict:
    """The table ``documents`` -> dedup/{edges,components,survivors}/ and dedup/report.json."""
    warming = _warm_kernels(ctx, documents)
    try:
        return _run_dedup(ctx, documents)
    finally:
        if warming is not None:
            warming.join()


def _warm_kernels(ctx: RunContext, documents: str):
    """On a local run whose input will reach the compiled kernels, compile them in this (driver) process while
    Spark starts and the steps before the features step run; the Python workers then load them from the shared
    numba cache instead of each compiling them (docs/dedup.md, Compiled kernels). The thread, or None."""
    plan = DedupPlan.from_config(ctx.config)
    path = ctx.table(documents)
    if not plan.enabled or not runs_here(ctx.config.spark.master) or not storage.is_local(path):
        return None
    size = sum(info.size for info in data_files(path))
    if size < 2 * numba_after():  # Parquet bytes: the workers' Python path takes the first numba_after() of text
        return None
    p = plan.lsh
    return warm_in_background(kernel_groups(p.hash, p.scheme, plan.verify, p.max_shingles is not None))


def _run_dedup(ctx: RunContext, documents: str) -> dict:
    plan, spark = DedupPlan.from_config(ctx.config), ctx.spark
    timer = StepLog("dedup", spark)
    docs = ctx.read_table(documents).withColumn("rank", _rank_key(plan))
    p, min_tokens = plan.lsh, plan.min_tokens
    extra = ExtraRemovals(ctx, plan, timer)  # decontamination, dedup index (docs/dedup_index.md); no-ops when off
    docs = extra.before_clustering(docs)
    if not plan.enabled:
        return _finish(ctx, documents, docs, None, None, plan, timer, extra=extra)
    timer.begin("features")
    # one Python pass per document: token count, content hash, band keys (text stays in Parquet)
    carry = ("rank", "source")  # passed through the Python step: no join brings them back
    feature_type = StructType([*_parse(spark, FEATURE_TYPE).fields, *(docs.schema[c] for c in carry)])
    features = docs.select("doc_id", "text", *carry).mapInArrow(
        per_task(lambda it: doc_features(iter(it), p, min_tokens, carry)), feature_type
    )
    features = features.persist(StorageLevel.MEMORY_AND_DISK)
    tally = features.agg(F.count("*").alias("n"), F.count(F.when(F.col("keys").isNull(), 1)).alias("short")).collect()[
        0
    ]
    short_documents = tally["short"]
    timer.lap("features", documents=tally["n"], short_documents=short_documents)
    extra.match_index(features, docs)
    found = find_candidates(features, tally["n"], plan, timer)
    groups, edges, candidates = found.groups, found.edges, found.candidate_edges
    if plan.verify:
        timer.begin("verify")
        edges = verify_edges(edges, docs, p, candidates).persist()
        at_threshold, candidate_jaccards = verified_edge_figures(edges, plan.threshold)  # computes the edges
        timer.lap("verify", verified_edges=at_threshold)
        kept = edges.where(F.col("jaccard") >= plan.threshold)
    else:
        kept, candidate_jaccards = edges.withColumn("jaccard", F.lit(None).cast("double")), []
        at_threshold = candidates
    timer.begin("components")
    ctx.write_table(kept, layout.EDGES)
    kept = ctx.read_table(layout.EDGES)
    verified = at_threshold  # the rows just written, counted before: no count job
    if verified <= plan.local_components_max_edges:  # small graph: union-find in one task
        near = single_task_components(kept).persist()
    else:
        near = connected_components(kept.select("src", "dst"), plan.engine, plan.checkpoint_interval).persist()
    timer.lap("components")  # the labels are computed where the survivors step first reads them
    stats = {
        "candidate_edges": candidates,
        "verified_edges": verified,
        "bands": p.bands,
        "rows": p.rows,
        "short_documents": short_documents,
        "short_exact_duplicates_removed": found.short_exact,
        "exact_duplicate_groups": found.exact_groups,
        "exact_duplicates_removed": found.exact_removed,
        "candidate_jaccard_histogram": candidate_jaccards,
    }
    ranked = features.select("doc_id", "source", "rank")
    result = _finish(ctx, documents, docs, groups, near, plan, timer, stats, ranked=ranked, extra=extra)
    for frame in (features, near, edges, *found.persisted):
        frame.unpersist()
    clear_checkpoints(spark)  # outputs are written: the components' checkpoints are no longer needed
    return result


def _finish(
    ctx,
    documents: str,
    docs,
    groups,
    near,
    plan: DedupPlan,
    timer: StepLog,
    stats: dict | None = None,
    ranked: DataFrame | None = None,
    extra: ExtraRemovals | None = None,
) -> dict:
    """Merge exact groups and near components, choose survivors, write outputs and the report.

    ``ranked`` (doc_id, source, rank) defaults to reading them from ``docs``."""
    spark: SparkSession = ctx.spark
    timer.begin("survivors")
    members = _cluster_members(spark, groups, near)
    ranked = docs.select("doc_id", "source", "rank") if ranked is None else ranked
    cluster = Window.partitionBy("cluster")  # one shuffle; an aggregate joined back would compute members twice
    components = members.join(ranked, "doc_id").select(
        "doc_id",
        "source",
        F.min("doc_id").over(cluster).alias("component"),
        F.min("rank").over(cluster)["doc_id"].alias("survivor"),
    )
    ctx.write_table(components, layout.COMPONENTS)
    components = ctx.read_table(layout.COMPONENTS)
    removed = components.where("doc_id != survivor")
    survivors = docs.drop("rank").join(removed.select("doc_id"), "doc_id", "left_anti")
    survivors = extra.final_survivors(survivors, components) if extra else survivors
    ctx.write_table(survivors, layout.SURVIVORS)
    if extra:
        extra.after_survivors(layout.SURVIVORS)
    if ctx.config.blend.rehydrate is not None:
        ctx.write_table(_cluster_sizes(ctx.read_table(layout.SURVIVORS), components), layout.CLUSTER_SIZES)
    timer.lap("survivors")
    timer.begin("report")
    stats = {**(stats or {}), **(extra.stats if extra else {})}
    report = build_report(
        ctx, documents, components, plan, timer.times, stats, *((extra.removed, extra.sections) if extra else ())
    )
    timer.close()
    return report["counts"]


def _cluster_sizes(survivors: DataFrame, components: DataFrame) -> DataFrame:
    """(doc_id, source, cluster_size) of every survivor: the documents of the cluster it was kept for, itself
    and its exact and near duplicates (datatrove's ``minhash_cluster_size``); 1 when it is in no cluster."""
    sizes = components.groupBy(F.col("survivor").alias("doc_id")).agg(F.count("*").alias("members"))
    return (
        survivors.select("doc_id", "source")
        .join(sizes, "doc_id", "left")
        .select("doc_id", "source", F.coalesce("members", F.lit(1)).cast("long").alias("cluster_size"))
    )


def _cluster_members(spark: SparkSession, groups, near) -> DataFrame:
    """(doc_id, cluster) for every document in an exact group or a near-duplicate component."""
    schema = "doc_id long, cluster long"
    if near is None and groups is None:
        return spark.createDataFrame([], schema)
    if groups is None:
        return near.select("doc_id", F.col("component").alias("cluster"))
    if near is None:
        return groups.select("doc_id", F.col("rep").alias("cluster"))
    # an exact copy joins its representative's near-duplicate component, if it has one
    via_rep = groups.join(near.select(F.col("doc_id").alias("rep"), "component"), "rep", "left")
    exact = via_rep.select("doc_id", F.coalesce("component", "rep").alias("cluster"))
    only_near = near.join(groups.select("doc_id"), "doc_id", "left_anti")
    return exact.unionByName(only_near.select("doc_id", F.col("component").alias("cluster")))


def _parse(spark: SparkSession, ddl: str) -> StructType:
    """The StructType of a DDL schema string."""
    return spark.createDataFrame([], ddl).schema


REMOVALS = ("duplicates_removed", "contaminated", "duplicates_of_earlier_runs")  # removal reasons, in run order


def _check_config(config: PipelineConfig) -> None:
    """LSH bands exist for the threshold (when not given); ``blend.rehydrate`` is valid (it makes dedup write
    ``dedup/cluster_sizes/``)."""
    config_rules(config)
    d = config.dedup
    if d.bands is None:
        try:
            optimal_bands(d.threshold, d.num_perm)
        except ValueError as exc:
            raise ConfigError(
                "dedup.threshold", f"no bands/rows for it ({exc}); set dedup.bands and dedup.rows"
            ) from None


def _precheck(ctx: RunContext) -> None:
    """GraphFrames loadable; the dedup index usable with these MinHash parameters (refused before any work)."""
    if ctx.config.dedup.engine == "graphframes":
        require_graphframes(ctx.spark)
    if ctx.config.dedup.index:
        require_index_usable(ctx.config.dedup.index, DedupPlan.from_config(ctx.config).lsh)


def _outdated(ctx: RunContext, counts: dict[str, Any]) -> str | None:
    """Why the finished dedup is stale though its config is not: the index runs it would look up differ from those
    it looked up (docs/dedup_index.md, Order), or a decontamination reference's files changed
    (docs/dedup_index.md, Decontamination)."""
    found = [why for why in (_index_changed(ctx, counts), *_references_changed(ctx, counts)) if why]
    return "; ".join(found) or None


def _index_changed(ctx: RunContext, counts: dict[str, Any]) -> str | None:
    """Another run committed while this one was unfinished, or a rerun of it finds the index changed."""
    index = ctx.config.dedup.index
    if index is None or "index_runs" not in counts:  # no index, or a marker from before runs were recorded
        return None
    now = runs_looked_up(index, DedupPlan.from_config(ctx.config).lsh, run_key(ctx))
    gained = sorted(set(now) - set(counts["index_runs"]))
    lost = sorted(set(counts["index_runs"]) - set(now))
    changes = []
    if gained:
        changes.append(f"gained {len(gained)} run(s) since it ran ({', '.join(gained)})")
    if lost:
        changes.append(f"no longer holds {', '.join(lost)}")
    return f"the dedup index {index} " + "; ".join(changes) if changes else None


def _references_changed(ctx: RunContext, counts: dict[str, Any]) -> list[str]:
    """A reference file added, removed or rewritten since the dedup ran (the listing recorded in its counts)."""
    if not ctx.config.decontaminate.references or "reference_files" not in counts:
        return []
    return changed_references(counts["reference_files"], reference_stamps(ctx.config))


def _commit_index(
    ctx: RunContext, result: StageResult, log: Callable[[str], None], complete: bool
) -> dict[str, Any] | None:
    """The complete, accounted run's documents join ``dedup.index`` (docs/dedup_index.md, Commit); a run that
    stops before its last stage says so."""
    if not ctx.config.dedup.index:
        return None
    if not complete:
        log(
            f"[index] not committed to {ctx.config.dedup.index} yet: a run's documents join the index when its "
            "last stage has finished and its accounting holds (python -m pipeline run finishes it)"
        )
        return None
    done = commit_run(ctx, result.counts.get("index_runs"))
    log(
        f"[index] {done['documents']} documents ({done['kept']} kept) committed to {done['index']} "
        f"(generation {done['generation']})"
    )
    return {"dedup_index": done}


class Dedup(Stage):
    """The documents -> their survivors (passed on), the edges, components and report of what was removed."""

    name = "dedup"
    config_keys = ("dedup", "decontaminate", "sources[].priority", "blend.rehydrate")
    version = 3  # 1: dedup.index left out when None, decontaminate when it has no references; 2: cluster_sizes when off
    reads = ("documents",)
    passes = {"documents": layout.SURVIVORS, "cluster_sizes": layout.CLUSTER_SIZES}  # the latter with rehydrate
    writes = (layout.DEDUP,)
    passes_on = "survivors"
    removal_tables = {REMOVALS[1]: layout.CONTAMINATED, REMOVALS[2]: layout.EARLIER_RUNS}
    report_keys = ("dedup",)
    stop_when_empty = True

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        return run_dedup(ctx, inputs["documents"].table)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        return {
            "dedup": asdict(config.dedup),
            "priorities": {s.name: s.priority for s in config.sources},
            "decontaminate": asdict(config.decontaminate),
            "cluster_sizes": config.blend.rehydrate is not None,  # blend.rehydrate makes it write dedup/cluster_sizes/
        }

    def upgrade(self, values: dict[str, Any], version: int) -> dict[str, Any]:
        """Version 1 left out ``dedup.index`` when None and ``decontaminate`` when it had no references; versions 1
        and 2 left out ``cluster_sizes`` when off."""
        upgraded = {"cluster_sizes": False, **values}
        if version == 1:
            upgraded["dedup"] = {"index": None, **values.get("dedup", {})}
            upgraded["decontaminate"] = values.get("decontaminate", asdict(DecontaminateConfig()))
        return upgraded

    def check_config(self, config: PipelineConfig) -> None:
        _check_config(config)

    def precheck(self, ctx: RunContext) -> None:
        _precheck(ctx)

    def outdated(self, ctx: RunContext, counts: dict[str, Any]) -> str | None:
        return _outdated(ctx, counts)

    def tally(self, counts: Mapping[str, Any]) -> dict[str, SourceTally]:
        return source_tally(counts, "survivors", read="documents", removals=REMOVALS)

    def after_run(
        self, ctx: RunContext, result: StageResult, log: Callable[[str], None], complete: bool
    ) -> dict[str, Any] | None:
        return _commit_index(ctx, result, log, complete)

    def report(self, run: str, counts: dict[str, Any]) -> dict[str, Any] | None:
        return report_section(run)

    def report_html(self, data: dict[str, Any]) -> list[str]:
        return report_html(data)


STAGE = Dedup()
