"""Spark tokenize stage: survivors -> ``shards/<source>/part-NNNNN.{bin,idx}`` (docs/indexed_dataset.md, Shards).

Per source, the survivors are range-partitioned by ``doc_id`` into ``tokenize.partitions``
partitions (equal-width ranges between the source's smallest and largest doc_id, read from the table's Parquet
footers where they are exact there (:mod:`pipeline.tokenize.footers`), else found by one job of Python tasks over
the two columns) and sorted within each, so reading the partitions in order gives doc_id order whatever the
partition count. Every partition is written as one IndexedDataset shard, one sequence per document with the
end-of-document id appended.

The JVM stays out of the data path: Spark only schedules Python tasks (:func:`~pipeline.spark.task_numbers.
task_numbers`), which read and write files themselves (:mod:`pipeline.tokenize.tasks`). A *map* job reads the
documents table's row groups with pyarrow (runs of row groups from the footers, one run per task), encodes the texts
with the broadcast tokenizer and writes each task attempt's documents, bucketed by (source, range), to one Arrow IPC
file under ``shards/_tmp/_map/``; its rows name the record batches of each bucket. A *reduce* job then runs one task
per non-empty (source, range): it reads that bucket's batches from the files of the attempts Spark kept (the rows
``collect`` returned), orders them by doc_id and writes the shard.

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
* **Map task attempts** write their own file (its name holds the attempt); only the files of the attempts whose
  rows ``collect`` returned are read, and ``_tmp/`` is deleted after the stage.
* **Reduce task attempts** write under ``shards/_tmp/<source>/part-NNNNN.attempt-K-T.{bin,idx}`` (outside
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
``tokenize``, attempt 0 of partition 0's reduce task raises half-way through its shard, leaving its partial
temporary files behind as a killed worker would.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline import storage
from pipeline.config import PipelineConfig
from pipeline.config.schema import tokenizer_values_from_v1
from pipeline.errors import PipelineError
from pipeline.megatron.format import bin_path, dtype_for_vocab, idx_path
from pipeline.megatron.reader import read_index
from pipeline.spark.task_numbers import task_numbers
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data, Stage
from pipeline.storage.parquet_footers import table_footers
from pipeline.tokenize.batches import BUCKETS_SCHEMA, SUMMARY_SCHEMA, Buckets
from pipeline.tokenize.footers import Unit, plan_units, spans_from_footers
from pipeline.tokenize.shards import list_shards, shard_dir, shard_name
from pipeline.tokenize.tasks import SPANS_SCHEMA, RunningTask, map_task, reduce_task, span_rows
from pipeline.tokenizer.bpe import BPETokenizer
from pipeline.tokenizer.run_files import bos_ids, eod_id, load_tokenizer

INJECT_PROPERTY = "pipeline.inject_failure"  # tests: "tokenize" fails partition 0's first reduce attempt
MAP_DIR = "_map"  # under shards/_tmp/: a source name starts with a letter or digit (config schema)
_SPARK_TYPES = {
    pa.int32(): "int",
    pa.int64(): "long",
    pa.string(): "string",
    pa.list_(pa.int32()): "array<int>",
}


def _ddl(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} {_SPARK_TYPES[f.type]}" for f in schema)


def _running_task() -> RunningTask:
    """The Spark task attempt running a task body (called inside the task, :mod:`pipeline.tokenize.tasks`)."""
    from pyspark import TaskContext

    task = TaskContext.get()
    assert task is not None, "called outside a Spark task"
    return RunningTask(task.attemptNumber(), task.taskAttemptId(), task.getLocalProperty(INJECT_PROPERTY))


def publish_winners(rows, out: str) -> None:
    """Driver side, object stores: copy each winning attempt's pair to its final name (``.idx`` last)."""
    for row in rows:
        if row["documents"] > 0:
            final = storage.join(out, shard_name(row["partition"]))
            won = row["written"]  # the attempt's files stay in _tmp/, removed with it after the job
            storage.commit([(bin_path(won), bin_path(final)), (idx_path(won), idx_path(final))], keep_staged=True)


def doc_id_spans(spark, units: list[Unit]) -> dict[str, tuple[int, int]]:
    """{source: (smallest doc_id, largest)} of the sources with documents: one job of Python tasks reading the two
    columns of the map tasks' row groups."""
    bc = spark.sparkContext.broadcast(units)
    try:
        rows = (
            task_numbers(spark, len(units)).mapInArrow(per_task(partial(span_rows, bc)), _ddl(SPANS_SCHEMA)).collect()
        )
    finally:
        bc.unpersist()
    spans: dict[str, tuple[int, int]] = {}
    for row in rows:
        low, high = spans.get(row["source"], (row["lo"], row["hi"]))
        spans[row["source"]] = (min(low, row["lo"]), max(high, row["hi"]))
    return spans


def _check_source(run_dir: str, source: str, rows: list, mapped: dict, dtype: np.dtype, parts: int) -> dict:
    """Driver side after the reduce job: publish (object stores), check the shard directory; the source's counts."""
    out = shard_dir(run_dir, source)
    if not storage.is_local(out):
        publish_winners(rows, out)
    written = sorted(r["partition"] for r in rows if r["documents"] > 0)
    pairs, stray = list_shards(out)
    if pairs != written or stray:
        raise PipelineError(f"{out}: expected shards {written}, found pairs {pairs} and other files {stray}")
    for row in rows:
        expected = mapped[source, row["partition"]]
        if row["documents"] != expected[0] or row["tokens"] != expected[1]:
            raise PipelineError(f"{out}/{shard_name(row['partition'])}: shard disagrees with its buckets")
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
        "documents_with_special_token_text": sum(
            special for (name, _), (_, _, special) in mapped.items() if name == source
        ),
        "dtype": dtype.name,
    }


def tokenize_sources(
    ctx: RunContext, table: str, tok: Any, dtype: np.dtype, eod: int, specials: tuple[str, ...], bos: tuple[int, ...]
) -> dict[str, dict]:
    """The map job (row groups -> buckets) and the reduce job (buckets -> shards) over every source; counts per
    source."""
    spark, parts = ctx.spark, ctx.config.tokenize.partitions
    names = [s.name for s in ctx.config.sources]
    footers = table_footers(table)
    if not footers:
        raise PipelineError(f"no Parquet files in table {table}")
    units = plan_units(footers, names, spark.sparkContext.defaultParallelism)
    spans = spans_from_footers(footers, names)
    if spans is None:  # the footers cannot tell exactly: one job of Python tasks over the two columns
        spans = doc_id_spans(spark, units)
    shards = ctx.path(layout.SHARDS)
    storage.remove(storage.join(shards, "_tmp"))
    for name in names:
        storage.remove(shard_dir(ctx.run_dir, name))
        storage.makedirs(shard_dir(ctx.run_dir, name))
    plan = Buckets(tuple(names), tuple(spans.get(n) for n in names), parts, dtype.name, eod, specials, bos)
    directory = storage.join(shards, "_tmp", MAP_DIR)
    units_bc, tok_bc = spark.sparkContext.broadcast(units), spark.sparkContext.broadcast(tok)
    try:
        bucket_rows = (
            task_numbers(spark, len(units))
            .mapInArrow(
                per_task(partial(map_task, _running_task, units_bc, tok_bc, plan, directory)), _ddl(BUCKETS_SCHEMA)
            )
            .collect()
        )
    finally:
        units_bc.unpersist()
        tok_bc.unpersist()
    mapped: dict[tuple[str, int], tuple[int, int, int]] = {}
    inputs: dict[tuple[str, int], list[tuple[str, tuple[int, ...]]]] = {}
    for row in bucket_rows:
        key = (row["source"], row["partition"])
        docs, tokens, special = mapped.get(key, (0, 0, 0))
        mapped[key] = (docs + row["documents"], tokens + row["tokens"], special + row["special_text_documents"])
        inputs.setdefault(key, []).append((row["path"], tuple(row["batches"])))
    work = [(source, part, tuple(sorted(inputs[source, part]))) for source, part in sorted(inputs)]
    work_bc = spark.sparkContext.broadcast(work)
    try:
        shard_rows = (
            task_numbers(spark, len(work))
            .mapInArrow(
                per_task(partial(reduce_task, _running_task, work_bc, ctx.run_dir, dtype.name)), _ddl(SUMMARY_SCHEMA)
            )
            .collect()
        )
    finally:
        work_bc.unpersist()
    by_source: dict[str, list] = {name: [] for name in names}
    for row in shard_rows:
        by_source[row["source"]].append(row)
    try:
        return {name: _check_source(ctx.run_dir, name, by_source[name], mapped, dtype, parts) for name in names}
    finally:
        storage.remove(storage.join(shards, "_tmp"))


def run_tokenize(ctx: RunContext, documents: str, tokenizer: str | None = None) -> dict:
    """Tokenize the table ``documents`` (dedup's survivors) of every source into shards (``tokenizer``: the files
    train-tokenizer wrote, when it ran); counts per source plus the dtype choice."""
    started = time.time()
    tok = load_tokenizer(ctx.config, ctx.path(*layout.parts(tokenizer)) if tokenizer else None)
    eod_token = ctx.config.tokenizer.eod_token
    eod, bos = eod_id(ctx.config, tok), tuple(bos_ids(ctx.config, tok))
    specials = tuple(tok.special_tokens) if isinstance(tok, BPETokenizer) else tok.special_texts()
    dtype = dtype_for_vocab(tok.vocab_size)
    sources = tokenize_sources(ctx, ctx.tables.path(*layout.parts(documents)), tok, dtype, eod, specials, bos)
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
