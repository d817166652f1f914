"""Adding a run's documents to the dedup index, compacting generations, describing an index
(docs/dedup_index.md, Commit).

A commit writes the run's generation aside (``generations/<new id>/``), then publishes it by one
conditional write of HEAD mapping the run to it. A HEAD changed by another committer in between
makes the write fail; the commit re-reads HEAD and tries again (up to :data:`COMMIT_ATTEMPTS`), so
two runs committing at once both land. A run killed before the publish leaves HEAD as it was; its
unpublished generation is never read (``describe`` lists it, ``compact`` deletes it).
"""

from __future__ import annotations

import time
import uuid

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from pipeline import storage
from pipeline.dedup.index.head import DedupIndexError, Head, check_parameters, read_head, write_head
from pipeline.dedup.index.spark.lookup import index_parameters, run_key
from pipeline.dedup.index.spark.tables import DOCS_DDL, generation_path, live_tables, tree_bytes
from pipeline.dedup.plan import DedupPlan
from pipeline.spark.tables import read_table_at, write_table_at
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext

COMMIT_ATTEMPTS = 20
ORPHAN_SECONDS = 24 * 3600  # compact deletes unpublished generations older than this (a commit in flight is younger)


def new_generation_id() -> str:
    """A new generation's name: UTC time (compaction reads the age from it) and a random part."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{uuid.uuid4().hex[:12]}"


def commit_run(ctx: RunContext) -> dict:
    """Add the run's deduplicated documents to ``dedup.index``; what was committed (index, run, generation, counts)."""
    index, spark, run = ctx.config.dedup.index, ctx.spark, run_key(ctx)
    if index is None:
        raise DedupIndexError("commit_run needs dedup.index")
    params = index_parameters(DedupPlan.from_config(ctx.config).lsh)
    for table in (("dedup", "index_entries"), ("documents",)):  # a resumed run may hold them only remotely
        ctx.tables.fetch(*table)
    entries = spark.read.parquet(ctx.table(layout.INDEX_ENTRIES))
    texts = spark.read.parquet(ctx.table(layout.DOCUMENTS)).select("doc_id", "source", "text")
    rows = entries.join(texts, "doc_id").withColumn("run", F.lit(run))
    generation = new_generation_id()
    write_table_at(
        spark,
        rows.select(F.posexplode("keys").alias("band", "key"), "run", "doc_id"),
        generation_path(index, generation, "bands"),
    )
    write_table_at(
        spark, rows.select(*[c.split()[0] for c in DOCS_DDL.split(", ")]), generation_path(index, generation, "docs")
    )
    counted = entries.groupBy("kept").count().collect()
    documents = sum(r["count"] for r in counted)
    kept = sum(r["count"] for r in counted if r["kept"])
    size = tree_bytes(generation_path(index, generation))
    replaced = publish(
        index,
        params,
        {
            run: {
                "generation": generation,
                "documents": documents,
                "kept": kept,
                "committed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        },
        {generation: {"documents": documents, "bytes": size}},
    )
    for old in replaced:
        storage.remove(generation_path(index, old))
    return {"index": index, "run": run, "generation": generation, "documents": documents, "kept": kept}


def publish(
    index: str,
    params: dict,
    runs: dict[str, dict],
    generations: dict[str, dict],
    drop_generations: tuple[str, ...] = (),
) -> list[str]:
    """Map ``runs`` to their (already written) generations in HEAD by a conditional write, retried on races.

    With ``drop_generations`` (a compaction) a run is remapped only while HEAD still maps it to one of
    them: a run recommitted meanwhile keeps its new generation. Returns the generations no run maps
    to any more (safe to delete).
    """
    for _ in range(COMMIT_ATTEMPTS):
        head, version = read_head(index)
        if head is None:
            head = Head(parameters=params)
        check_parameters(head, params, index)
        before = set(head.generations)
        for run, entry in runs.items():
            if not drop_generations:
                head.runs[run] = head.place(run, entry)
            elif head.runs.get(run, {}).get("generation") in drop_generations:
                head.runs[run] = entry
        for gid in drop_generations:
            head.generations.pop(gid, None)
        head.generations.update(generations)
        used = {entry["generation"] for entry in head.runs.values()}
        unused = sorted(g for g in head.generations if g not in used)
        for gid in unused:
            head.generations.pop(gid)
        try:
            write_head(index, head, version)
        except FileExistsError:
            time.sleep(0.05)
            continue
        return sorted((before - set(head.generations)) | set(drop_generations))
    raise DedupIndexError(
        f"dedup index {index}: HEAD changed {COMMIT_ATTEMPTS} times while this run was "
        "committing (other runs committing); nothing was added, rerun to commit"
    )


def compact(spark: SparkSession, index: str) -> str:
    """Rewrite every live row into one generation (few files); a one-line summary."""
    head, _ = read_head(index)
    if head is None:
        raise DedupIndexError(f"{index} holds no dedup index (no HEAD.json)")
    old = sorted(head.live_generations())
    bands, docs = live_tables(spark, index, head, None)
    generation = new_generation_id()
    files = max(1, spark.sparkContext.defaultParallelism)
    write_table_at(
        spark,
        bands.repartition(files, "band", "key").sortWithinPartitions("band", "key"),
        generation_path(index, generation, "bands"),
    )
    write_table_at(spark, docs.repartition(files, "run", "doc_id"), generation_path(index, generation, "docs"))
    documents = read_table_at(spark, generation_path(index, generation, "docs"), DOCS_DDL).count()
    size = tree_bytes(generation_path(index, generation))
    runs = {run: {**entry, "generation": generation} for run, entry in head.runs.items() if entry["generation"] in old}
    replaced = publish(index, head.parameters, runs, {generation: {"documents": documents, "bytes": size}}, tuple(old))
    for gid in replaced:
        storage.remove(generation_path(index, gid))
    removed = _remove_orphans(index)
    return f"compacted {len(old)} generation(s) of {index} into {generation}: {documents} documents, {size} bytes" + (
        f"; deleted {removed} unpublished generation(s)" if removed else ""
    )


def _generation_dirs(index: str) -> list[str]:
    fs, root = storage.resolve(storage.join(index, "generations"))
    fs.invalidate_cache()
    if not fs.exists(root):
        return []
    return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(root, detail=False))


def _remove_orphans(index: str) -> int:
    """Delete generation directories HEAD does not list and that are older than ORPHAN_SECONDS."""
    head, _ = read_head(index)
    live = set(head.generations) if head else set()
    removed = 0
    for gid in _generation_dirs(index):
        stamp = gid.split("-", 1)[0]
        try:
            age = time.time() - time.mktime(time.strptime(stamp, "%Y%m%dT%H%M%SZ")) + time.timezone
        except ValueError:
            continue
        if gid not in live and age > ORPHAN_SECONDS:
            storage.remove(generation_path(index, gid))
            removed += 1
    return removed


def describe(index: str) -> str:
    """Runs, documents and size of an index, as text."""
    head, _ = read_head(index)
    if head is None:
        raise DedupIndexError(f"{index} holds no dedup index (no HEAD.json)")
    lines = [f"dedup index {index}", "parameters: " + ", ".join(f"{k}={v}" for k, v in sorted(head.parameters.items()))]
    lines.append(
        f"{len(head.runs)} run(s), {sum(e['documents'] for e in head.runs.values())} documents, "
        f"{len(head.generations)} generation(s), {sum(g['bytes'] for g in head.generations.values())} bytes"
    )
    for run, entry in sorted(head.runs.items()):
        lines.append(
            f"  {run}: {entry['documents']} documents ({entry.get('kept', '?')} kept), "
            f"committed {entry['committed']}, "
            f"generation {entry['generation']}"
        )
    orphans = [g for g in _generation_dirs(index) if g not in head.generations]
    if orphans:
        lines.append(f"unpublished generations (from runs that stopped before their commit): {', '.join(orphans)}")
    return "\n".join(lines)
