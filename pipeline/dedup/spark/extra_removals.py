"""What the dedup stage removes besides within-run duplicates (docs/dedup_index.md), behind one small interface.

* **contaminated**: documents sharing word n-grams with a benchmark (``decontaminate.references``),
  taken out before clustering (:mod:`pipeline.decontaminate.spark.step`); listed in ``dedup/contaminated/``.
* **duplicates_of_earlier_runs**: with ``dedup.index``, a document matching an indexed document
  (every document of the earlier runs' dedup, kept or removed)
  (:mod:`pipeline.dedup.index.spark.lookup`) takes its whole within-run cluster with it, as one run over
  both days would have: the cluster's survivor is removed too (its other members were already
  removed as within-run duplicates). Listed in ``dedup/earlier_runs/`` with the match that decided it.

With neither key set nothing here runs and the stage's outputs are unchanged.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline import storage
from pipeline.decontaminate.references import reference_stamps
from pipeline.decontaminate.spark.step import find_contaminated
from pipeline.dedup.index.spark.lookup import match_index, require_index_usable
from pipeline.dedup.plan import DedupPlan
from pipeline.logs import StepLog
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext

EXAMPLES = 5


class ExtraRemovals:
    """Decontamination and the dedup index, as seen from the dedup stage."""

    def __init__(self, ctx: RunContext, plan: DedupPlan, steps: StepLog) -> None:
        self.ctx = ctx
        self.plan = plan
        self.steps = steps  # the stage's step log: these steps are timed and logged like its own
        self.removed: dict[str, DataFrame] = {}  # report count key -> (doc_id, source) removed for that reason
        self.sections: dict[str, dict[str, Any]] = {}  # extra report sections
        self.stats: dict[str, Any] = {}  # extra entries of the stage's counts (its marker and the manifest)
        self.matches: DataFrame | None = None
        self.features: DataFrame | None = None
        self._remove_stale_tables()
        if plan.index:
            require_index_usable(plan.index, plan.lsh)

    def _remove_stale_tables(self) -> None:
        """Drop this module's tables left by an earlier run of the stage with another config."""
        stale = ([] if self.ctx.config.decontaminate.references else ["contaminated"]) + (
            [] if self.plan.index else ["earlier_matches", "earlier_runs", "index_entries"]
        )
        for name in stale:
            storage.remove(self.ctx.path("dedup", name))

    def before_clustering(self, docs: DataFrame) -> DataFrame:
        """``docs`` without the contaminated documents (unchanged when no reference is configured)."""
        if not self.ctx.config.decontaminate.references:
            return docs
        self.steps.begin("decontaminate")
        # what the references were, before reading them: a resumed run compares it with a fresh listing (outdated)
        self.stats["reference_files"] = reference_stamps(self.ctx.config)
        found, section = find_contaminated(self.ctx, docs)
        removed = sum(r["documents_removed"] for r in section["references"].values())
        self.steps.lap("decontaminate", contaminated=removed)
        self.removed["contaminated"] = found.select("doc_id", "source")
        self.sections["decontamination"] = section
        return docs.join(found.select("doc_id"), "doc_id", "left_anti")

    def match_index(self, features: DataFrame, docs: DataFrame) -> None:
        """Find this run's matches in the dedup index (needs the stage's features: doc_id, h1, h2, keys)."""
        if not self.plan.index:
            return
        self.steps.begin("index_lookup")
        self.matches, runs = match_index(self.ctx, features, docs, self.plan)
        self.stats["index_runs"] = runs  # the resume check compares it with the index (pipeline.run.registry)
        self.steps.lap("index_lookup")
        self.features = features.select("doc_id", "h1", "h2", "keys")

    def final_survivors(self, survivors: DataFrame, components: DataFrame) -> DataFrame:
        """Survivors of the within-run dedup minus those whose cluster matched an earlier run."""
        if not self.plan.index:
            return survivors
        spark = self.ctx.spark
        if self.matches is None:
            earlier = spark.createDataFrame(
                [], "doc_id long, source string, via_doc_id long, index_run string, index_doc_id long, jaccard double"
            )
        else:
            clusters = components.select("doc_id", "survivor")
            found = self.matches.join(clusters, "doc_id", "left").select(
                F.coalesce("survivor", "doc_id").alias("removed"),
                F.struct(F.col("doc_id").alias("via_doc_id"), "index_run", "index_doc_id", "jaccard").alias("m"),
            )
            first = found.groupBy("removed").agg(F.min("m").alias("m"))
            earlier = first.join(survivors.select(F.col("doc_id").alias("removed"), "source"), "removed").select(
                F.col("removed").alias("doc_id"), "source", "m.via_doc_id", "m.index_run", "m.index_doc_id", "m.jaccard"
            )
        self.ctx.write_table(earlier, layout.EARLIER_RUNS)
        earlier = self.ctx.read_table(layout.EARLIER_RUNS)
        self.removed["duplicates_of_earlier_runs"] = earlier.select("doc_id", "source")
        examples = earlier.orderBy("doc_id").limit(EXAMPLES).collect()
        self.sections["earlier_runs"] = {"index": self.plan.index, "examples": [r.asDict() for r in examples]}
        return survivors.join(earlier.select("doc_id"), "doc_id", "left_anti")

    def after_survivors(self, survivors: str) -> None:
        """Keep what the index commit needs: ``dedup/index_entries/`` (doc_id, h1, h2, keys, kept).

        Every document the dedup saw goes into the index, the removed duplicates too: a later
        document near one of them is a duplicate of earlier content even when it is not near that
        cluster's survivor, as in one run over both days.
        """
        if not self.plan.index or self.features is None:
            return
        kept = self.ctx.read_table(survivors).select("doc_id", F.lit(True).alias("kept"))
        entries = self.features.join(kept, "doc_id", "left").withColumn("kept", F.coalesce("kept", F.lit(False)))
        self.ctx.write_table(entries, layout.INDEX_ENTRIES)
