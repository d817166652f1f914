"""Spark tokenize stage: survivors -> ``shards/<source>/part-NNNNN.{bin,idx}`` (SPEC §3, §6, §11).

Per source, the survivors are range-partitioned by ``doc_id`` into ``tokenize.partitions``
partitions and sorted within each, so reading the partitions in order gives doc_id order whatever
the partition count. Every partition is encoded with the broadcast tokenizer and written as one
IndexedDataset shard, one sequence per document with the end-of-document id appended.

Outcomes this stage defines:

* **Special-token strings inside a document** (e.g. a literal ``<|endoftext|>``) are encoded as
  ordinary text (``encode(text, split_special=False)``, like tiktoken's ``encode_ordinary``): a
  document can never smuggle a document boundary into the training data. Such documents are
  counted (``documents_with_special_token_text``), never dropped.
* **An empty partition** (more partitions than documents, or a gap in the range bounds) writes no
  shard. Shard numbers therefore may skip; the merge takes the shards that exist in partition
  order, which is still doc_id order.
* **A source without survivors** writes no shard at all; the merge does not publish it.
* **Task attempts** write under ``shards/_tmp/<source>/part-NNNNN.attempt-K-T.{bin,idx}`` (outside
  the shard directory). Locally the attempt then moves its pair to the final name, ``.bin`` first
  and ``.idx`` (the commit point) last, each move an atomic rename; two successful attempts of one
  partition (a speculative copy) publish byte-identical files, because a partition's content and
  order are fixed by the range partitioning and the sort on the unique doc_id. On object stores
  (no atomic rename, SPEC §11) an attempt never touches a final name: it reports its attempt
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

import functools
import re
import time
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from pipeline import storage
from pipeline.context import RunContext
from pipeline.errors import PipelineError
from pipeline.megatron.format import dtype_for_vocab
from pipeline.megatron.reader import read_index
from pipeline.megatron.shards import list_shards, shard_dir, shard_name, tmp_dir
from pipeline.megatron.writer import IndexedDatasetWriter, publish
from pipeline.worker_imports import skip_unchanged_zip_rescans

INJECT_PROPERTY = "pipeline.inject_failure"
SUMMARY_SCHEMA = pa.schema([
    ("partition", pa.int32()), ("attempt", pa.int32()), ("documents", pa.int64()),
    ("tokens", pa.int64()), ("special_text_documents", pa.int64()), ("written", pa.string()),
])
_SPARK_TYPES = {pa.int32(): "int", pa.int64(): "long", pa.string(): "string"}


class InjectedFailure(PipelineError, RuntimeError):
    """The deliberate mid-write failure of a first task attempt (failure-injection tests)."""


def utf8_buffers(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(UTF-8 bytes as uint8, int64 offsets of each text in them) of an Arrow string column,
    without copying the text; a null text is empty. Raises ``ValueError`` on invalid UTF-8."""
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        column = pc.fill_null(column, "")  # null slots may hold any bytes: rebuilt as empty
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        raise ValueError(f"text column must be a string column, got {column.type}")
    try:
        column.validate(full=True)  # checks the UTF-8: the kernel trusts it
    except pa.ArrowInvalid as exc:
        raise ValueError(f"text column holds invalid UTF-8: {exc}") from exc
    _, offset_buf, data_buf = column.buffers()
    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    offsets = np.frombuffer(offset_buf, dtype=width)[column.offset:column.offset + len(column) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return data, offsets.astype(np.int64)


def count_special_text(column: pa.Array, specials: tuple[str, ...],
                       utf8: bytes | memoryview | np.ndarray | None = None) -> int:
    """Number of texts holding at least one of the ``specials`` strings (nulls hold none).

    ``utf8``, the column's text bytes back to back (any buffer: bytes, or the uint8 view of the
    Arrow data buffer, searched in place without a copy), lets a batch without any special string
    skip the per-text search."""
    import pyarrow.compute as pc

    if not specials or len(column) == 0:
        return 0
    if utf8 is not None and not any(_literal(s).search(utf8) for s in specials):
        return 0
    hit = pc.match_substring(column, specials[0])
    for s in specials[1:]:
        hit = pc.or_kleene(hit, pc.match_substring(column, s))
    return int(pc.sum(hit.cast(pa.int64())).as_py() or 0)


@functools.lru_cache(maxsize=64)
def _literal(text: str) -> re.Pattern[bytes]:
    """Compiled search for the UTF-8 bytes of ``text`` (``re`` searches any buffer without copying it)."""
    return re.compile(re.escape(text.encode("utf-8")))


def _tokenize_partition(batches: Iterator[pa.RecordBatch], tok_bc, out_dir: str, tmp: str,
                        dtype_name: str, eod: int, specials: tuple[str, ...]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: encode one partition's texts, write and publish its shard, yield a summary.

    Per Arrow batch: the column's UTF-8 buffer goes to the encoder as is, and its flat ids (each
    document followed by ``eod``) go to the writer in one call: no Python object per document."""
    from pyspark import TaskContext

    skip_unchanged_zip_rescans()  # later tasks in this reused worker start ~0.1 CPU s sooner (CPython 3.10/3.11)
    task = TaskContext.get()
    part, attempt = task.partitionId(), task.attemptNumber()
    inject = task.getLocalProperty(INJECT_PROPERTY) == "tokenize" and part == 0 and attempt == 0
    name = shard_name(part)
    tmp_prefix = storage.join(tmp, f"{name}.attempt-{attempt}-{task.taskAttemptId()}")
    encode = tok_bc.value.encode_utf8_batch  # special-token strings as plain text
    writer: IndexedDatasetWriter | None = None
    docs = tokens = special_docs = 0
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if writer is None:
                writer = IndexedDatasetWriter(tmp_prefix, dtype=np.dtype(dtype_name),
                                              buffer_bytes=1 if inject else 4 << 20)
            column = batch.column("text")
            data, offsets = utf8_buffers(column)
            ids, ends = encode(data, offsets, append_id=eod)  # one call per Arrow batch
            if inject:
                half = batch.num_rows // 2
                writer.add_documents(ids[:ends[half - 1] if half else 0], ends[:half])
                writer._flush()
                writer._bin.close()  # a torn attempt object on object stores, a partial file locally
                raise InjectedFailure(f"injected failure in {name} attempt {attempt}")
            writer.add_documents(ids, ends)
            tokens += int(ids.size)
            special_docs += count_special_text(column, specials, data[offsets[0]:offsets[-1]])
            docs += batch.num_rows
        if writer is not None:
            writer.close()
            if storage.is_local(out_dir):
                publish(tmp_prefix, storage.join(out_dir, name))
                tmp_prefix = storage.join(out_dir, name)
    except InjectedFailure:
        raise  # like a killed worker: no cleanup here, the driver removes _tmp/
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    yield pa.RecordBatch.from_pylist(
        [{"partition": part, "attempt": attempt, "documents": docs, "tokens": tokens,
          "special_text_documents": special_docs, "written": tmp_prefix if writer is not None else None}],
        schema=SUMMARY_SCHEMA)


def publish_winners(rows, out: str) -> None:
    """Driver side, object stores: copy each winning attempt's pair to its final name (``.idx`` last)."""
    from pipeline.objectstore import copy_object

    for row in rows:
        if row["documents"] > 0:
            final = storage.join(out, shard_name(row["partition"]))
            copy_object(f"{row['written']}.bin", f"{final}.bin")
            copy_object(f"{row['written']}.idx", f"{final}.idx")


def _tokenize_source(ctx: RunContext, survivors, source: str, tok_bc, dtype: np.dtype,
                     eod: int, specials: tuple[str, ...]) -> dict:
    """One Spark job: write the shards of ``source``; check them; return its counts."""
    from pyspark.sql import functions as F

    parts = ctx.config.tokenize.partitions
    out, tmp = shard_dir(ctx, source), tmp_dir(ctx, source)
    storage.remove(out)
    storage.remove(tmp)
    storage.makedirs(out)
    docs = (survivors.where(F.col("source") == source).select("doc_id", "text")
            .repartitionByRange(parts, "doc_id").sortWithinPartitions("doc_id").select("text"))
    schema = ", ".join(f"{f.name} {_SPARK_TYPES[f.type]}" for f in SUMMARY_SCHEMA)
    dtype_name = dtype.name
    rows = docs.mapInArrow(
        lambda it: _tokenize_partition(it, tok_bc, out, tmp, dtype_name, eod, specials), schema
    ).collect()
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


def run_tokenize(ctx: RunContext) -> dict:
    """Tokenize the survivors of every source into shards; counts per source plus the dtype choice."""
    from pipeline.tokenizer.stage import load_tokenizer

    started = time.time()
    tok = load_tokenizer(ctx)
    eod_token = ctx.config.tokenizer.eod_token
    eod = tok.token_id(eod_token)
    dtype = dtype_for_vocab(tok.vocab_size)
    survivors = ctx.spark.read.parquet(ctx.table("dedup", "survivors"))
    tok_bc = ctx.spark.sparkContext.broadcast(tok)
    try:
        sources = {s.name: _tokenize_source(ctx, survivors, s.name, tok_bc, dtype, eod,
                                            tuple(tok.special_tokens)) for s in ctx.config.sources}
    finally:
        tok_bc.unpersist()
    storage.remove(ctx.path("shards", "_tmp"))
    return {
        "sources": sources,
        "dtype": dtype.name,
        "dtype_rule": "uint16 when the vocabulary has fewer than 65500 ids, else int32 (preprocess_data.py)",
        "vocab_size": tok.vocab_size,
        "eod_token": eod_token,
        "eod_id": eod,
        "special_tokens_in_text": "encoded as ordinary text",
        "seconds": round(time.time() - started, 3),
    }
