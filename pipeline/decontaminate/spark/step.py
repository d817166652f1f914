"""Spark step of decontamination, run by the dedup stage before clustering (docs/dedup_index.md, Decontamination).

Reference texts are read like sources (same reader, same record rules), cut into word n-grams and
hashed. When the distinct (reference, n-gram) pairs number at most :data:`BROADCAST_NGRAMS` they are
collected once and broadcast as a sorted table that each task probes with ``searchsorted``; above
that, every document's n-gram hashes are joined with the reference table on Spark (a shuffle).
Either way a document is *contaminated* when it shares >= ``min_matches`` distinct n-grams with one
reference (all texts of that reference together); it is attributed to the reference it shares most
with. Contaminated documents leave the dedup stage's input and are listed in ``dedup/contaminated/``.
"""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from pipeline.decontaminate.batches import doc_ngrams, reference_ngrams
from pipeline.decontaminate.filter import FIELDS, REASON, ContaminationFilter
from pipeline.decontaminate.ngrams import ReferenceTable
from pipeline.sources.spark.reader import read_sources
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.filter import dropped_batches, dropped_ddl

BROADCAST_NGRAMS = 5_000_000  # ~60 MB of sorted hashes and reference indices per executor
EXAMPLES = 3
LOG = logging.getLogger("pipeline.dedup")


def read_references(ctx: RunContext) -> tuple[DataFrame, dict[str, dict]]:
    """(source=reference name, text) of every reference text, and per reference its texts and rejects."""
    cfg = ctx.config
    refs = cfg.decontaminate.references
    records = read_sources(ctx.spark, refs, cfg.ingest, "decontaminate.references", keep_fields=False)
    records = records.select("source", "text", "reason").persist()
    stats = {r.name: {"texts": 0, "rejected": 0} for r in refs}
    for row in records.groupBy("source", F.col("reason").isNull().alias("ok")).count().collect():
        stats[row["source"]]["texts" if row["ok"] else "rejected"] = row["count"]
    return records.where(F.col("reason").isNull()).select("source", "text"), stats


def find_contaminated(ctx: RunContext, docs: DataFrame) -> tuple[DataFrame, dict]:
    """Write ``dedup/contaminated/`` for ``docs`` (doc_id, source, text); return it and the report section."""
    cfg = ctx.config.decontaminate
    n, spark = cfg.ngram, ctx.spark
    refs, stats = read_references(ctx)
    ngrams = refs.mapInArrow(
        per_task(lambda it: reference_ngrams(iter(it), n)), "reference string, hash long, ngram string"
    )
    ngrams = ngrams.persist()
    for row in ngrams.where("hash IS NULL").groupBy("reference").count().collect():
        stats[row["reference"]]["short_texts"] = row["count"]
    distinct = ngrams.where("hash IS NOT NULL").dropDuplicates(["reference", "hash"])
    size = distinct.count()
    names = [r.name for r in cfg.references]
    if size <= BROADCAST_NGRAMS:
        lookup = "broadcast"
        rows = distinct.select("reference", "hash").collect()
        per_ref = Counter(r["reference"] for r in rows)
        index = {name: i for i, name in enumerate(names)}
        table = ReferenceTable(
            np.array([r["hash"] for r in rows], np.int64).view(np.uint64),
            np.array([index[r["reference"]] for r in rows], np.int32),
            names,
        )
        shared = spark.sparkContext.broadcast(ContaminationFilter(table, n, cfg.min_matches))
        found = docs.select("doc_id", "source", "text").mapInArrow(
            per_task(lambda it: dropped_batches(it, [shared.value], FIELDS)), dropped_ddl(FIELDS)
        )
    else:
        lookup = "join"
        per_ref = Counter({r["reference"]: r["count"] for r in distinct.groupBy("reference").count().collect()})
        found = _joined_matches(docs, distinct, cfg.min_matches, n)
        detail = F.format_string(
            f"%d distinct {n}-grams shared with reference '%s' (min_matches {cfg.min_matches})", "matches", "reference"
        )
        found = found.select("doc_id", "source", F.lit(REASON).alias("reason"), detail.alias("detail"), *FIELDS.names)
    for name in names:
        stats[name]["ngrams"] = per_ref[name]
    _warn_empty(stats, names, n)
    ctx.write_table(found, layout.CONTAMINATED)
    ngrams.unpersist()
    found = ctx.read_table(layout.CONTAMINATED)
    return found, _section(found, stats, names, size, lookup)


def _warn_empty(stats: dict, names: list[str], n: int) -> None:
    """A WARNING naming each reference that yields no n-gram at all (empty, all rejected, or every text too short):
    it cannot remove anything (docs/dedup_index.md, Decontamination)."""
    for i, name in enumerate(names):
        s = stats[name]
        if not s["ngrams"]:
            LOG.warning(
                "decontaminate.references.%d (%r) yields no %d-grams (%d texts, %d rejected, %d shorter than %d "
                "words): it removes nothing; check its paths, format and text_field",
                i,
                name,
                n,
                s["texts"],
                s["rejected"],
                s.get("short_texts", 0),
                n,
            )


def _joined_matches(docs: DataFrame, ref_ngrams: DataFrame, min_matches: int, n: int) -> DataFrame:
    """The shuffle path: doc n-gram hashes joined with the reference table, counted per (doc, reference)."""
    doc_hashes = docs.select("doc_id", "text").mapInArrow(
        per_task(lambda it: doc_ngrams(iter(it), n)), "doc_id long, hash long"
    )
    pairs = doc_hashes.join(ref_ngrams.select("reference", "hash", "ngram"), "hash")
    per_ref = pairs.groupBy("doc_id", "reference").agg(
        F.count("*").alias("matches"), F.min(F.struct("hash", "ngram")).alias("first")
    )
    per_ref = per_ref.where(F.col("matches") >= min_matches)
    best = Window.partitionBy("doc_id").orderBy(F.desc("matches"), "reference")
    top = per_ref.withColumn("rank", F.row_number().over(best)).where("rank = 1")
    return top.join(docs.select("doc_id", "source"), "doc_id").select(
        "doc_id", "source", "reference", "matches", F.col("first.ngram").alias("ngram")
    )


def _section(found: DataFrame, stats: dict, names: list[str], ngrams: int, lookup: str) -> dict:
    """The report's ``decontamination`` section: per reference, documents removed and a few examples."""
    per_ref = {
        name: {
            "documents_removed": 0,
            "texts": stats[name]["texts"],
            "rejected": stats[name]["rejected"],
            "short_texts": stats[name].get("short_texts", 0),
            "ngrams": stats[name]["ngrams"],
            "examples": [],
        }
        for name in names
    }
    for row in found.groupBy("reference").count().collect():
        per_ref[row["reference"]]["documents_removed"] = row["count"]
    ranked = Window.partitionBy("reference").orderBy("doc_id")
    for row in (
        found.withColumn("i", F.row_number().over(ranked))
        .where(F.col("i") <= EXAMPLES)
        .orderBy("reference", "doc_id")
        .collect()
    ):
        per_ref[row["reference"]]["examples"].append(
            {"doc_id": row["doc_id"], "source": row["source"], "matches": row["matches"], "ngram": row["ngram"]}
        )
    return {"references": per_ref, "reference_ngrams": ngrams, "lookup": lookup}
