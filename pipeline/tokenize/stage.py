"""Spark tokenize stage: survivors -> ``shards/<source>/part-NNNNN.{bin,idx}`` (docs/indexed_dataset.md, Shards).

Per source, the survivors are range-partitioned by ``doc_id`` into ``tokenize.partitions``
partitions (equal-width ranges between the source's smallest and largest doc_id, read from the table's Parquet
footers where they are exact there (:mod:`pipeline.tokenize.footers`), else found by one Spark job; placed by
:mod:`pipeline.tokenize.ranges`) and sorted within each, so reading the partitions in order gives doc_id
order whatever the partition count. Every partition is encoded with the broadcast tokenizer and written as one
IndexedDataset shard, one sequence per document with the end-of-document id appended.

Outcomes this stage defines:

* **Special-token strings inside a document** (e.g. a literal ``<|endoftext|>``) are encoded as
  ordinary text (``encode(text, split_special=False)``, like tiktoken's ``encode_ordinary``): a
  document can never smuggle a document boundary into the training data. With ``tokenizer.kind:
  huggingface`` the library's ids win: it turns a special added token's text into its id
  (docs/tokenizer.md, Kinds). Such documents are counted (``documents_with_special_token_text``),
  never dropped.
* **An empty partition** (more partitions than documents, or a gap in the range bounds) writes no
  shard. Shard numbers therefore may skip; the merge takes the shards that exist in partition
  order, which is still doc_id order.
* **A source without survivors** writes no shard at all; the merge does not publish it.
* **Task attempts** write under ``shards/_tmp/<source>/part-NNNNN.attempt-K-T.{bin,idx}`` (outside
  the shard directory). Locally the attempt then moves its pair to the final name, ``.bin`` first
  and ``.idx`` (the commit point) last, each move an atomic rename; two successful attempts of one
  partition (a speculative copy) publish byte-identical files, because a partition's content and
  order are fixed by the range partitioning and the sort on the unique doc_id. On object stores
  (no atomic rename, docs/running.md, Cluster and storage) an attempt never touches a final name: it reports its attempt
  prefix in its result row, and after the job the driver copies the pair of the attempt Spark
  kept (the one whose row ``collect`` returned; one per partition) to the final name, server side,
  ``.bin`` then ``.idx``. A failed, killed or losing attempt leaves at most files under ``_tmp/``,
  which the driver deletes after the job. So a shard can be neither torn nor doubled, and no later
  attempt can overwrite a published shard. The driver then checks that the shard directory holds
  exactly the pairs the winning attempts reported.

Failure injection (tests): when the Spark local property ``pipeline.inject_failure`` is
``tokenize``, attempt 0 of partition 0 raises half-way through its shard, leaving its partial
temporary files behind as a killed worker would.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline import storage
from pipeline.config import PipelineConfig
from pipeline.config.schema import tokenizer_values_from_v1
from pipeline.errors import PipelineError
from pipeline.megatron.format import bin_path, dtype_for_vocab, idx_path
from pipeline.megatron.reader import read_index
from pipeline.spark.temporary_conf import ARROW_BATCH_ROWS, temporary_conf
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, Stage
from pipeline.tokenize.batches import SUMMARY_SCHEMA, TaskAttempt, tokenize_partition
from pipeline.tokenize.footers import footer_spans
from pipeline.tokenize.ranges import check_placed, placement_keys
from pipeline.tokenize.shards import list_shards, shard_dir, shard_name, tmp_dir
from pipeline.tokenizer.bpe import BPETokenizer
from pipeline.tokenizer.run_files import bos_ids, eod_id, load_tokenizer

INJECT_PROPERTY = "pipeline.inject_failure"
# Rows per Arrow batch fed to the encoder (Spark's default is 10,000): fewer rows cost Spark's feeding and the encoder
# less CPU, and a batch of long documents stays small in a worker (docs/benchmarks.md, Tokenize stage constants).
BATCH_ROWS = 1000
# Above this many partitions the placement keys' array literal costs the driver more planning than Spark's sampling
# job costs (docs/benchmarks.md, Tokenize stage constants): repartitionByRange then
PLACED_PARTITIONS = 1024
_SPARK_TYPES = {pa.int32(): "int", pa.int64(): "long", pa.string(): "string"}


def _tokenize_placed(
    batches: Iterable[pa.RecordBatch],
    tok: Any,
    out: str,
    tmp: str,
    dtype_name: str,
    eod: int,
    specials: tuple[str, ...],
    bos: tuple[int, ...],
) -> Iterator[pa.RecordBatch]:
    """A task's shard from its rows, after checking that each row belongs to the task's doc_id range."""
    task = _task_attempt()
    placed = check_placed(iter(batches), task.partition)
    return tokenize_partition(placed, task, tok, out, tmp, dtype_name, eod, specials, bos)


def _task_attempt() -> TaskAttempt:
    """The running Spark task's partition and attempt (called inside the task)."""
    from pyspark import TaskContext

    task = TaskContext.get()
    assert task is not None, "called outside a Spark task"
    part, attempt = task.partitionId(), task.attemptNumber()
    inject = task.getLocalProperty(INJECT_PROPERTY) == "tokenize" and part == 0 and attempt == 0
    return TaskAttempt(part, attempt, task.taskAttemptId(), inject)


def publish_winners(rows, out: str) -> None:
    """Driver side, object stores: copy each winning attempt's pair to its final name (``.idx`` last)."""
    for row in rows:
        if row["documents"] > 0:
            final = storage.join(out, shard_name(row["partition"]))
            won = row["written"]  # the attempt's files stay in _tmp/, removed with it after the job
            storage.commit([(bin_path(won), bin_path(final)), (idx_path(won), idx_path(final))], keep_staged=True)


def range_of(doc_id, lowest: int, highest: int, partitions: int):
    """Spark column: the range (0 .. partitions-1) of ``doc_id``: equal widths between ``lowest`` and ``highest``,
    computed in doubles (every step is monotone, so a larger doc_id never gets a smaller range)."""
    from pyspark.sql import functions as F

    width = (float(highest) - float(lowest)) / partitions
    if width <= 0:
        return F.lit(0)
    at = F.floor((doc_id.cast("double") - F.lit(float(lowest))) / F.lit(width)).cast("int")
    return F.least(F.greatest(at, F.lit(0)), F.lit(partitions - 1))


def partitioned(docs, parts: int, lowest: int, highest: int):
    """(range, text) of ``docs`` in ``parts`` Spark partitions: partition ``b`` holds the documents of the ``b``-th
    equal-width doc_id range between ``lowest`` and ``highest``, sorted by doc_id (:mod:`pipeline.tokenize.ranges`);
    above :data:`PLACED_PARTITIONS` partitions, Spark's ``repartitionByRange`` chooses the ranges."""
    from pyspark.sql import functions as F

    if parts > PLACED_PARTITIONS:  # the key array's planning outgrows the sampling job it saves
        return (
            docs.select("doc_id", "text")
            .repartitionByRange(parts, "doc_id")
            .sortWithinPartitions("doc_id")
            .select(F.spark_partition_id().alias("range"), "text")
        )
    keys = F.array(*[F.lit(k).cast("long") for k in placement_keys(parts)])
    return (
        docs.select("doc_id", "text", range_of(F.col("doc_id"), lowest, highest, parts).alias("range"))
        .repartition(parts, F.element_at(keys, F.col("range") + 1))
        .sortWithinPartitions("doc_id")
        .select("range", "text")
    )


def _tokenize_source(
    ctx: RunContext,
    survivors,
    source: str,
    tok_bc,
    dtype: np.dtype,
    eod: int,
    specials: tuple[str, ...],
    doc_ids: tuple[int, int] | None,
    bos: tuple[int, ...] = (),
) -> dict:
    """One Spark job: write the shards of ``source`` (its smallest and largest doc_id, None without documents);
    check them; return its counts."""
    from pyspark.sql import functions as F

    parts = ctx.config.tokenize.partitions
    out, tmp = shard_dir(ctx.run_dir, source), tmp_dir(ctx.run_dir, source)
    storage.remove(out)
    storage.remove(tmp)
    storage.makedirs(out)
    schema = ", ".join(f"{f.name} {_SPARK_TYPES[f.type]}" for f in SUMMARY_SCHEMA)
    dtype_name = dtype.name

    rows = []
    if doc_ids is not None:
        with temporary_conf(ctx.spark, ARROW_BATCH_ROWS, str(BATCH_ROWS)):
            rows = (
                partitioned(survivors.where(F.col("source") == source), parts, *doc_ids)
                .mapInArrow(
                    per_task(lambda it: _tokenize_placed(it, tok_bc.value, out, tmp, dtype_name, eod, specials, bos)),
                    schema,
                )
                .collect()
            )
    if not storage.is_local(out):
        publish_winners(rows, out)
    storage.remove(tmp)
    written = sorted(r["partition"] for r in rows if r["documents"] > 0)
    pairs, stray = list_shards(out)
    if pairs != written or stray:
        raise PipelineError(f"{out}: expected shards {written}, found pairs {pairs} and other files {stray}")
    for row in rows:
        if row["documents"] > 0:
            header = read_index(storage.join(out, shard_name(row["partition"])), mmap=False)[0]
            if header.document_count != row["documents"] or header.dtype != dtype:
                raise PipelineError(f"{out}/{shard_name(row['partition'])}: index disagrees with its task")
    return {
        "documents": sum(r["documents"] for r in rows),
        "tokens": sum(r["tokens"] for r in rows),
        "shards": len(written),
        "partitions": parts,
        "empty_partitions": parts - len(written),
        "retried_tasks": sum(1 for r in rows if r["attempt"] > 0),
        "documents_with_special_token_text": sum(r["special_text_documents"] for r in rows),
        "dtype": dtype.name,
    }


def doc_id_spans(survivors) -> dict[str, tuple[int, int]]:
    """{source: (smallest doc_id, largest)} of the sources with documents: one job over two narrow columns."""
    from pyspark.sql import functions as F

    spans = survivors.groupBy("source").agg(F.min("doc_id").alias("lo"), F.max("doc_id").alias("hi")).collect()
    return {row["source"]: (int(row["lo"]), int(row["hi"])) for row in spans}


def run_tokenize(ctx: RunContext, documents: str, tokenizer: str | None = None) -> dict:
    """Tokenize the table ``documents`` (dedup's survivors) of every source into shards (``tokenizer``: the files
    train-tokenizer wrote, when it ran); counts per source plus the dtype choice."""
    started = time.time()
    tok = load_tokenizer(ctx.config, ctx.path(*layout.parts(tokenizer)) if tokenizer else None)
    eod_token = ctx.config.tokenizer.eod_token
    eod, bos = eod_id(ctx.config, tok), tuple(bos_ids(ctx.config, tok))
    specials = tuple(tok.special_tokens) if isinstance(tok, BPETokenizer) else tok.special_texts()
    dtype = dtype_for_vocab(tok.vocab_size)
    survivors = ctx.read_table(documents)
    doc_ids = footer_spans(ctx.tables.path(*layout.parts(documents)), [s.name for s in ctx.config.sources])
    if doc_ids is None:  # the footers cannot tell exactly: one Spark job over the two columns
        doc_ids = doc_id_spans(survivors)
    tok_bc = ctx.spark.sparkContext.broadcast(tok)
    # One job per source, each scanning the table for its source's rows: Spark's Parquet reader skips the row groups
    # whose source statistics exclude it (the direct tables' reader does not). One job for every source would need
    # each task to find its source's shard directory and number from its partition, and the failure injection and
    # the checks after the job to work per source instead of per job: not done.
    try:
        sources = {
            s.name: _tokenize_source(ctx, survivors, s.name, tok_bc, dtype, eod, specials, doc_ids.get(s.name), bos)
            for s in ctx.config.sources
        }
    finally:
        tok_bc.unpersist()
    storage.remove(ctx.path(layout.SHARDS, "_tmp"))
    return {
        "sources": sources,
        "dtype": dtype.name,
        "dtype_rule": "uint16 when the vocabulary has fewer than 65500 ids, else int32 (preprocess_data.py)",
        "vocab_size": tok.vocab_size,
        "tokenizer_kind": ctx.config.tokenizer.kind,
        "eod_token": eod_token,
        "eod_id": eod,
        "bos_id": bos[0] if bos else None,
        "special_tokens_in_text": "their ids (the library's)"
        if ctx.config.tokenizer.kind == "huggingface"
        else "encoded as ordinary text",
        "seconds": round(time.time() - started, 3),
    }


class Tokenize(Stage):
    """The documents (dedup's survivors) -> token shards per source, ``shards/`` (passed on)."""

    name = "tokenize"
    config_keys = ("tokenizer", "tokenize")
    reads = ("documents",)
    optional_reads = ("tokenizer",)  # trained by the train-tokenizer stage (tokenizer.train), else the config's files
    passes = {"shards": layout.SHARDS}
    version = 2  # 1: before tokenizer.kind, path, pattern, add_bos and bos_token (at their defaults then)
    writes = (layout.SHARDS,)

    def run(self, ctx: RunContext, inputs: Mapping[str, Data]) -> dict[str, Any]:
        trained = inputs.get("tokenizer")
        return run_tokenize(ctx, inputs["documents"].table, trained.table if trained else None)

    def config_values(self, config: PipelineConfig) -> dict[str, Any]:
        return {"tokenizer": asdict(config.tokenizer), "tokenize": asdict(config.tokenize)}

    def upgrade(self, values: dict[str, Any], version: int) -> dict[str, Any]:
        return tokenizer_values_from_v1(values)


STAGE = Tokenize()
