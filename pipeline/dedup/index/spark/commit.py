"""Adding a run's documents to the dedup index, compacting generations, describing an index
(docs/dedup_index.md, Commit).

A commit writes the run's generation aside (``generations/<new id>/``), then publishes it by one
conditional write of HEAD mapping the run to it. A HEAD changed by another committer in between
makes the write fail; the commit re-reads HEAD and tries again (up to :data:`COMMIT_ATTEMPTS`), so
two runs committing at once both land, unless one of them should have looked the other up: a HEAD
that gained runs the dedup stage did not look up (its ``index_runs``) refuses the commit
(:class:`IndexMovedError`), checked on the version the conditional write names, so two racing commits
cannot both pass. A run killed before the publish leaves HEAD as it was; its unpublished generation
is never read (``describe`` lists it, ``compact`` deletes it).
"""

from __future__ import annotations

import time
import uuid

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from pipeline import storage
from pipeline.dedup.index.head import DedupIndexError, Head, check_parameters, read_head, write_head
from pipeline.dedup.index.spark.lookup import index_parameters, run_key
from pipeline.dedup.index.spark.tables import DOCS_DDL, generation_dirs, generation_path, live_tables, tree_bytes
from pipeline.dedup.plan import DedupPlan
from pipeline.spark.tables import read_table_at, write_table_at
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext

COMMIT_ATTEMPTS = 20
ORPHAN_SECONDS = 24 * 3600  # compact deletes unpublished generations older than this (a commit in flight is younger)


class IndexMovedError(DedupIndexError):
    """HEAD gained runs this run's dedup did not look up: publishing would keep what they hold a second time."""


def new_generation_id() -> str:
    """A new generation's name: UTC time (compaction reads the age from it) and a random part."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{uuid.uuid4().hex[:12]}"


def commit_run(ctx: RunContext, looked_up: list[str] | None = None) -> dict:
    """Add the run's deduplicated documents to ``dedup.index``; what was committed (index, run, generation, counts).
    ``looked_up``: the index runs the dedup stage looked up (its counts' ``index_runs``; None: not recorded)."""
    index, spark, run = ctx.config.dedup.index, ctx.spark, run_key(ctx)
    if index is None:
        raise DedupIndexError("commit_run needs dedup.index")
    params = index_parameters(DedupPlan.from_config(ctx.config).lsh)
    entries = ctx.read_table(layout.INDEX_ENTRIES)
    texts = ctx.read_table(layout.DOCUMENTS).select("doc_id", "source", "text")
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
    entry = {
        "generation": generation,
        "documents": documents,
        "kept": kept,
        "committed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        replaced = publish(
            index, params, {run: entry}, {generation: {"documents": documents, "bytes": size}}, looked_up=looked_up
        )
    except IndexMovedError:
        storage.remove(generation_path(index, generation))  # never published: nothing reads it
        raise
    for old in replaced:
        storage.remove(generation_path(index, old))
    return {"index": index, "run": run, "generation": generation, "documents": documents, "kept": kept}


def gained_runs(head: Head, run: str, looked_up: list[str]) -> list[str]:
    """The runs ``run`` would look up in ``head`` that its dedup did not (docs/dedup_index.md, Order)."""
    return sorted(set(head.runs_before(run)) - set(looked_up))


def _refuse_moved(index: str, run: str, gained: list[str]) -> IndexMovedError:
    return IndexMovedError(
        f"dedup index {index} gained {len(gained)} run(s) since this run's dedup looked it up "
        f"({', '.join(gained)}): nothing was committed and this run's outputs may keep documents they hold; "
        f"rerun the same command (python -m pipeline run ...) for {run}: it recomputes dedup and every later "
        "stage against them, then commits"
    )


def publish(
    index: str,
    params: dict,
    runs: dict[str, dict],
    generations: dict[str, dict],
    drop_generations: tuple[str, ...] = (),
    looked_up: list[str] | None = None,
) -> list[str]:
    """Map ``runs`` to their (already written) generations in HEAD by a conditional write, retried on races.

    With ``drop_generations`` (a compaction) a run is remapped only while HEAD still maps it to one of
    them: a run recommitted meanwhile keeps its new generation. With ``looked_up`` (a run's commit: the
    runs its dedup looked up) the HEAD version the write names must hold no other run the committed run
    would look up, else :class:`IndexMovedError` and HEAD is left as it was. Returns the generations no
    run maps to any more (safe to delete).
    """
    for _ in range(COMMIT_ATTEMPTS):
        head, version = read_head(index)
        if head is None:
            head = Head(parameters=params)
        check_parameters(head, params, index)
        for run in runs if looked_up is not None else ():
            gained = gained_runs(head, run, looked_up or [])
            if gained:  # checked on `version`: a HEAD changed after this read fails the write below, and is re-checked
                raise _refuse_moved(index, run, gained)
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


COMPACT_ATTEMPTS = 3


def compact(spark: SparkSession, index: str) -> str:
    """Rewrite every live row into one generation (few files); a one-line summary.

    It reads the generations of the HEAD version it started from. A commit landing meanwhile may delete one
    of them (a recommitted run's old generation): the read then fails, HEAD has moved, and compaction
    starts again from the new HEAD (up to :data:`COMPACT_ATTEMPTS` times, then :class:`DedupIndexError`);
    its own publish is the conditional write of :func:`publish`, which leaves a recommitted run's newer
    generation in place (docs/dedup_index.md, Maintenance).
    """
    for _ in range(COMPACT_ATTEMPTS):
        head, version = read_head(index)
        if head is None:
            raise DedupIndexError(f"{index} holds no dedup index (no HEAD.json)")
        generation = new_generation_id()
        try:
            documents, size = _write_compacted(spark, index, head, generation)
        except Exception:  # noqa: BLE001 - a generation deleted under the read, or a real failure: HEAD tells
            storage.remove(generation_path(index, generation))
            if read_head(index)[1] == version:
                raise
            continue
        old = sorted(head.live_generations())
        runs = {r: {**entry, "generation": generation} for r, entry in head.runs.items() if entry["generation"] in old}
        summary = {generation: {"documents": documents, "bytes": size}}
        replaced = publish(index, head.parameters, runs, summary, tuple(old))
        for gid in replaced:
            storage.remove(generation_path(index, gid))
        removed = _remove_orphans(index)
        return f"compacted {len(old)} generation(s) of {index} into {generation}: {documents} documents, " + (
            f"{size} bytes" + (f"; deleted {removed} unpublished generation(s)" if removed else "")
        )
    raise DedupIndexError(
        f"dedup index {index}: HEAD changed {COMPACT_ATTEMPTS} times while compacting (runs committing): "
        "nothing was compacted; run index compact again when no run is committing"
    )


def _write_compacted(spark: SparkSession, index: str, head: Head, generation: str) -> tuple[int, int]:
    """Write every live row of ``head`` into ``generation``; its documents and bytes."""
    bands, docs = live_tables(spark, index, head, None)
    files = max(1, spark.sparkContext.defaultParallelism)
    write_table_at(
        spark,
        bands.repartition(files, "band", "key").sortWithinPartitions("band", "key"),
        generation_path(index, generation, "bands"),
    )
    write_table_at(spark, docs.repartition(files, "run", "doc_id"), generation_path(index, generation, "docs"))
    documents = read_table_at(spark, generation_path(index, generation, "docs"), DOCS_DDL).count()
    return documents, tree_bytes(generation_path(index, generation))


def _remove_orphans(index: str) -> int:
    """Delete generation directories HEAD does not list and that are older than ORPHAN_SECONDS."""
    head, _ = read_head(index)
    live = set(head.generations) if head else set()
    removed = 0
    for gid in generation_dirs(index):
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
    """Runs, documents and size of an index, as text; its problems (:func:`index_problems`) last."""
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
            f"committed {entry.get('committed', '?')}, "
            f"generation {entry['generation']}"
        )
    present = generation_dirs(index)
    orphans = [g for g in present if g not in head.generations]
    if orphans:
        lines.append(f"unpublished generations (from runs that stopped before their commit): {', '.join(orphans)}")
    lines += [f"problem: {p}" for p in index_problems(index, head, present)]
    return "\n".join(lines)


def index_problems(index: str, head: Head, present: list[str] | None = None) -> list[str]:
    """What makes the index unreadable: a generation HEAD maps a run to that is not in ``generations/``."""
    present = generation_dirs(index) if present is None else present
    return [
        f"HEAD maps {', '.join(runs)} to generation {gid}, missing from {storage.join(index, 'generations')}"
        for gid, runs in sorted(head.live_generations().items())
        if gid not in present
    ]
