"""The tokenize stage's Arrow work (no Spark import): Parquet row groups -> encoded buckets -> one shard per range.

The stage's task bodies (:mod:`pipeline.tokenize.tasks`) call these with their work and identity
(:class:`TaskAttempt`); this module never asks Spark for anything, so it runs and is tested on plain files:

* :func:`bucket_documents` (a map task): reads its row groups of the documents table with pyarrow, encodes the
  texts, and writes each document's ids, keyed by its doc_id, to one Arrow IPC file, in record batches that each
  hold one bucket (a source's doc_id range, :func:`ranges_of`); it reports which batches hold which bucket.
* :func:`write_range_shard` (a reduce task): reads the batches of its bucket from every map task's file, orders the
  documents by doc_id and writes them as one IndexedDataset shard.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline import storage
from pipeline.errors import PipelineError
from pipeline.megatron.writer import IndexedDatasetWriter, publish
from pipeline.numba_backend import TOKENIZER
from pipeline.tokenize.shards import shard_name
from pipeline.tokenizer.bpe import BPETokenizer
from pipeline.tokenizer.library import LibraryTokenizer

SUMMARY_SCHEMA = pa.schema(  # a reduce task's row: its shard
    [
        ("source", pa.string()),
        ("partition", pa.int32()),
        ("attempt", pa.int32()),
        ("documents", pa.int64()),
        ("tokens", pa.int64()),
        ("written", pa.string()),
    ]
)
BUCKETS_SCHEMA = pa.schema(  # a map task's rows: one per bucket it wrote
    [
        ("source", pa.string()),
        ("partition", pa.int32()),
        ("path", pa.string()),
        ("batches", pa.list_(pa.int32())),
        ("documents", pa.int64()),
        ("tokens", pa.int64()),
        ("special_text_documents", pa.int64()),
    ]
)
COLUMNS = ("doc_id", "source", "text")  # what a map task reads of the documents table
# A map task writes a bucket's documents once they hold this many bytes of ids, and all of them once its buffers hold
# FLUSH_TOTAL: its memory stays bounded whatever its row groups hold.
FLUSH_BUCKET = 8 << 20
FLUSH_TOTAL = 128 << 20
TAKE_DOCUMENTS = 4096  # documents per gather while a reduce task writes its shard in doc_id order


@dataclass(frozen=True)
class TaskAttempt:
    """Which task attempt runs a partition, and whether it must fail half-way (failure-injection tests)."""

    partition: int
    attempt: int
    attempt_id: int  # unique per attempt within the Spark application
    inject_failure: bool = False


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
    offsets = np.frombuffer(offset_buf, dtype=width)[column.offset : column.offset + len(column) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return data, offsets.astype(np.int64)


def count_special_text(
    column: pa.Array, specials: tuple[str, ...], utf8: bytes | memoryview | np.ndarray | None = None
) -> int:
    """Number of texts holding at least one of the ``specials`` strings (nulls hold none).

    ``utf8``, the column's text bytes back to back (any buffer: bytes, or the uint8 view of the
    Arrow data buffer, searched in place without a copy), lets a batch without any special string
    skip the per-text search."""
    import pyarrow.compute as pc

    if not specials or len(column) == 0:
        return 0
    if utf8 is not None and not holds_any(utf8, [s.encode("utf-8") for s in specials]):
        return 0
    hit = pc.match_substring(column, specials[0])
    for s in specials[1:]:
        hit = pc.or_kleene(hit, pc.match_substring(column, s))
    return int(pc.sum(hit.cast(pa.int64())).as_py() or 0)


def holds_any(data: np.ndarray | bytes | memoryview, needles: Sequence[bytes]) -> bool:
    """Whether the bytes ``data`` (any buffer: a uint8 array or view, searched in place without a copy) contain
    any of ``needles``.

    One compiled alternation of the literal needles (:func:`_any_of`) scans the buffer once for all of them (a
    tokenizer may name dozens of special tokens): ``re`` skips in C to the bytes that can start a needle, which are
    rare in prose and code."""
    if not needles:
        return False
    return _any_of(tuple(needles)).search(data) is not None  # type: ignore[arg-type]  # ndarray is a Buffer


@functools.lru_cache(maxsize=16)
def _any_of(needles: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """The compiled alternation of the literal ``needles``."""
    return re.compile(b"|".join(re.escape(n) for n in needles))


@dataclass(frozen=True)
class Buckets:
    """What every map task needs besides its row groups: the sources, each one's doc_id span (None: no rows), the
    ranges per source, the shard dtype and the encoder's extra ids."""

    sources: tuple[str, ...]
    spans: tuple[tuple[int, int] | None, ...]
    partitions: int
    dtype_name: str
    eod: int
    specials: tuple[str, ...]
    bos: tuple[int, ...] = ()

    def schema(self) -> pa.Schema:
        """The map files' schema (:func:`bucket_schema`)."""
        return bucket_schema(self.dtype_name)


def bucket_schema(dtype_name: str) -> pa.Schema:
    """The map files' schema: each document's doc_id and ids (in the shard's dtype)."""
    return pa.schema([("doc_id", pa.int64()), ("ids", pa.large_list(pa.from_numpy_dtype(np.dtype(dtype_name))))])


def ranges_of(doc_ids: np.ndarray, lowest: int, highest: int, partitions: int) -> np.ndarray:
    """The range (0 .. partitions-1) of each doc_id: equal widths between ``lowest`` and ``highest``, computed in
    doubles (every step is monotone, so a larger doc_id never gets a smaller range)."""
    width = (float(highest) - float(lowest)) / partitions
    if width <= 0:
        return np.zeros(len(doc_ids), dtype=np.int32)
    at = np.floor((np.asarray(doc_ids, dtype=np.int64).astype(np.float64) - float(lowest)) / width)
    return np.clip(at, 0, partitions - 1).astype(np.int32)


def encode_column(
    tokenizer: BPETokenizer | LibraryTokenizer, column: pa.Array, bos: tuple[int, ...], eod: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ids, ends, UTF-8 bytes, offsets) of a text column: each document's ids (``bos`` before, ``eod`` after) back to
    back, ``ends[i]`` the end of document i. The column's UTF-8 buffer goes to our encoder as is; a library tokenizer
    (docs/tokenizer.md, Kinds) without our kernel gets the texts. Special-token strings are plain text."""
    data, offsets = utf8_buffers(column)
    size = int(offsets[-1] - offsets[0])  # small inputs stay off the compiled path (numba_backend.py)
    if isinstance(tokenizer, LibraryTokenizer) and tokenizer.fast is not None and TOKENIZER.use("encode", size):
        ids, ends = tokenizer.encode_utf8_documents(data, offsets, bos, eod)  # ids as tiktoken's
    elif isinstance(tokenizer, LibraryTokenizer):
        texts = [t if t is not None else "" for t in column.to_pylist()]
        ids, ends = tokenizer.encode_documents(texts, bos, eod)
    else:
        encoder = tokenizer if TOKENIZER.use("encode", size) else tokenizer.python_path()
        ids, ends = encoder.encode_utf8_batch(data, offsets, append_id=eod)
    return ids, ends, data, offsets


def special_text_rows(column: pa.Array, specials: tuple[str, ...], utf8: np.ndarray) -> np.ndarray | None:
    """Which texts hold one of the ``specials`` strings; None when none does (``utf8``: the texts' bytes)."""
    import pyarrow.compute as pc

    if not specials or len(column) == 0 or not holds_any(utf8, [s.encode("utf-8") for s in specials]):
        return None
    hit = pc.match_substring(column, specials[0])
    for s in specials[1:]:
        hit = pc.or_kleene(hit, pc.match_substring(column, s))
    return np.asarray(pc.fill_null(hit, False).to_numpy(zero_copy_only=False), dtype=bool)


def narrowed(ids: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``ids`` as ``dtype``; ``ValueError`` naming the id when one does not fit (never wrapped around)."""
    if ids.dtype == dtype or np.can_cast(ids.dtype, dtype, "safe") or ids.size == 0:
        return ids.astype(dtype, copy=False)
    if ids.dtype.kind not in "iub":
        raise ValueError(f"token ids must be integers, got dtype {ids.dtype}")
    info = np.iinfo(dtype)
    lo, hi = int(ids.min()), int(ids.max())
    if lo < info.min or hi > info.max:
        bad = lo if lo < info.min else hi
        raise ValueError(
            f"token id {bad} does not fit {dtype.name} [{info.min}, {info.max}]; use a wider dtype, e.g. "
            "dtype_for_vocab(vocab_size)"
        )
    return ids.astype(dtype)


class _BucketFile:
    """A map task's IPC file: buffered record batches per bucket, each written once it is large enough."""

    def __init__(self, path: str, schema: pa.Schema) -> None:
        self.path, self.schema = path, schema
        self.held: dict[int, list[pa.RecordBatch]] = {}
        self.held_bytes: dict[int, int] = {}
        self.written: dict[int, list[int]] = {}
        self._stack = contextlib.ExitStack()
        self._writer: Any = None
        self._count = 0

    def add(self, bucket: int, batch: pa.RecordBatch) -> None:
        self.held.setdefault(bucket, []).append(batch)
        self.held_bytes[bucket] = self.held_bytes.get(bucket, 0) + batch.nbytes
        if self.held_bytes[bucket] >= FLUSH_BUCKET:
            self._write(bucket)
        elif sum(self.held_bytes.values()) >= FLUSH_TOTAL:
            for held in list(self.held):
                self._write(held)

    def _write(self, bucket: int) -> None:
        if self._writer is None:
            fs, inner = storage.resolve(self.path)
            storage.ensure_parent(self.path)
            sink = self._stack.enter_context(fs.open(inner, "wb"))
            self._writer = self._stack.enter_context(pa.ipc.new_file(sink, self.schema))
        self._writer.write_batch(pa.concat_batches(self.held.pop(bucket)))
        del self.held_bytes[bucket]
        self.written.setdefault(bucket, []).append(self._count)
        self._count += 1

    def close(self) -> dict[int, list[int]]:
        """Write what is held, close the file; {bucket: its record batches' numbers}."""
        for held in sorted(self.held):
            self._write(held)
        self._stack.close()
        return self.written

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._stack.close()


def bucket_documents(batches: Iterable[pa.RecordBatch], plan: Buckets, tokenizer: Any, path: str) -> list[dict]:
    """Encode the documents of the configured sources in ``batches`` (columns :data:`COLUMNS`) and write them to the
    IPC file ``path`` by bucket (``source index * partitions + range``); one row (:data:`BUCKETS_SCHEMA`) per bucket
    written. A task writes nothing for rows of other sources, and no file without documents."""
    import pyarrow.compute as pc

    dtype, parts = np.dtype(plan.dtype_name), plan.partitions
    out = _BucketFile(path, plan.schema())
    known = pa.array(plan.sources, pa.string())
    counts: dict[int, list[int]] = {}  # bucket -> [documents, tokens, special-text documents]
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            which = pc.fill_null(pc.index_in(batch.column("source"), value_set=known), -1).to_numpy()
            if (which < 0).any():
                batch, which = batch.filter(pa.array(which >= 0)), which[which >= 0]
                if batch.num_rows == 0:
                    continue
            doc_ids = np.asarray(batch.column("doc_id").to_numpy(zero_copy_only=False), dtype=np.int64)
            key = np.empty(batch.num_rows, dtype=np.int64)
            for index in np.unique(which):
                span = plan.spans[index]
                if span is None:
                    raise PipelineError(f"tokenize: source {plan.sources[index]} has documents but no doc_id span")
                rows = which == index
                key[rows] = index * parts + ranges_of(doc_ids[rows], span[0], span[1], parts)
            column = batch.column("text")
            ids, ends, data, offsets = encode_column(tokenizer, column, plan.bos, plan.eod)
            ids = narrowed(np.asarray(ids), dtype)
            starts = np.zeros(len(ends) + 1, dtype=np.int64)
            starts[1:] = ends
            special = special_text_rows(column, plan.specials, data[offsets[0] : offsets[-1]])
            lengths = np.diff(starts)
            order = np.argsort(key, kind="stable")  # the batch's documents bucket by bucket
            ids, ends = gathered(ids, starts, order)
            sorted_keys = key[order]
            bounds = [0, *(np.flatnonzero(np.diff(sorted_keys)) + 1).tolist(), len(order)]
            for low, high in zip(bounds[:-1], bounds[1:], strict=False):
                bucket, rows = int(sorted_keys[low]), order[low:high]
                first = int(ends[low - 1]) if low else 0
                lists = pa.LargeListArray.from_arrays(
                    pa.array(np.concatenate(([0], ends[low:high] - first))), pa.array(ids[first : int(ends[high - 1])])
                )
                out.add(bucket, pa.record_batch([pa.array(doc_ids[rows]), lists], schema=out.schema))
                count = counts.setdefault(bucket, [0, 0, 0])
                count[0] += len(rows)
                count[1] += int(lengths[rows].sum())
                count[2] += int(special[rows].sum()) if special is not None else 0
        written = out.close()
    except BaseException:
        out.abort()
        raise
    return [
        {
            "source": plan.sources[bucket // parts],
            "partition": bucket % parts,
            "path": path,
            "batches": written[bucket],
            "documents": docs_,
            "tokens": tokens,
            "special_text_documents": special_docs,
        }
        for bucket, (docs_, tokens, special_docs) in sorted(counts.items())
    ]


def read_bucket(parts: Iterable[tuple[str, Sequence[int]]], schema: pa.Schema, stack: contextlib.ExitStack) -> pa.Table:
    """The record batches ``parts`` names (``(IPC file, batch numbers)``) as one table; local files are memory-mapped
    (their buffers stay valid while ``stack`` is open)."""
    batches = []
    for path, numbers in parts:
        if storage.is_local(path):
            source: Any = stack.enter_context(pa.memory_map(storage.local_path(path)))
        else:
            fs, inner = storage.resolve(path)
            source = stack.enter_context(fs.open(inner, "rb"))
        reader = pa.ipc.open_file(source)
        batches += [reader.get_batch(i) for i in numbers]
    return pa.Table.from_batches(batches, schema=schema)


def gathered(ids: np.ndarray, starts: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ids, ends) of the documents ``order`` back to back, document ``i`` being ``ids[starts[i]:starts[i + 1]]``:
    one copy of each document's slice (a gather by token index would build an int64 index per token)."""
    if len(order) == 0:
        return ids[:0], np.zeros(0, dtype=np.int64)
    lows, highs = starts[:-1][order], starts[1:][order]
    out = np.concatenate([ids[a:b] for a, b in zip(lows.tolist(), highs.tolist(), strict=True)])
    return out, np.cumsum(highs - lows)


def in_doc_id_order(table: pa.Table) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(ids, ends) of the table's documents in doc_id order, :data:`TAKE_DOCUMENTS` documents at a time."""
    doc_ids = np.asarray(table.column("doc_id").to_numpy(), dtype=np.int64)
    order = np.argsort(doc_ids, kind="stable")
    column = table.column("ids")
    docs = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    offsets = np.asarray(docs.offsets.to_numpy(), dtype=np.int64)
    ids = np.asarray(docs.values.to_numpy())
    for start in range(0, len(order), TAKE_DOCUMENTS):
        yield gathered(ids, offsets, order[start : start + TAKE_DOCUMENTS])


def write_range_shard(
    parts: Iterable[tuple[str, Sequence[int]]], task: TaskAttempt, source: str, out_dir: str, tmp: str, dtype_name: str
) -> dict:
    """A reduce task: the shard of partition ``task.partition`` from its buckets ``parts`` (``(IPC file, batch
    numbers)`` of the winning map attempts); the task's row (:data:`SUMMARY_SCHEMA`).

    The attempt writes under ``tmp`` and, locally, publishes its pair to ``out_dir`` itself (``.idx`` last); on
    object stores the driver copies the winning attempt's pair."""
    with contextlib.ExitStack() as stack:
        table = read_bucket(parts, bucket_schema(dtype_name), stack)
        return write_shard(in_doc_id_order(table), task, source, out_dir, tmp, dtype_name)


def write_shard(
    documents: Iterator[tuple[np.ndarray, np.ndarray]],
    task: TaskAttempt,
    source: str,
    out_dir: str,
    tmp: str,
    dtype_name: str,
) -> dict:
    """Write ``documents`` (chunks of ids and ends) as the shard of ``task.partition``; the task's row.

    With ``task.inject_failure`` the attempt writes half of its first chunk and raises, leaving its partial files."""
    part, attempt = task.partition, task.attempt
    name = shard_name(part)
    tmp_prefix = storage.join(tmp, f"{name}.attempt-{attempt}-{task.attempt_id}")
    writer: IndexedDatasetWriter | None = None
    docs = tokens = 0
    try:
        for ids, ends in documents:
            if len(ends) == 0:
                continue
            if writer is None:
                writer = IndexedDatasetWriter(
                    tmp_prefix, dtype=np.dtype(dtype_name), buffer_bytes=1 if task.inject_failure else 4 << 20
                )
            if task.inject_failure:
                half = len(ends) // 2
                writer.add_documents(ids[: ends[half - 1] if half else 0], ends[:half])
                writer._flush()
                writer._bin.close()  # a torn attempt object on object stores, a partial file locally
                raise InjectedFailure(f"injected failure in {source}/{name} attempt {attempt}")
            writer.add_documents(ids, ends)
            tokens += int(ids.size)
            docs += len(ends)
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
    return {
        "source": source,
        "partition": part,
        "attempt": attempt,
        "documents": docs,
        "tokens": tokens,
        "written": tmp_prefix if writer is not None else None,
    }
