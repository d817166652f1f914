"""Arrow in, Arrow out for the tokenize stage (no Spark import): one partition's texts -> one shard.

The stage (:mod:`pipeline.tokenize.stage`) hands each task's Arrow batches to :func:`tokenize_partition`
with the task's identity (:class:`TaskAttempt`); this module never asks Spark for it, so it runs and is
tested on plain Arrow batches.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline import storage
from pipeline.errors import PipelineError
from pipeline.megatron.writer import IndexedDatasetWriter, publish
from pipeline.numba_backend import TOKENIZER
from pipeline.tokenize.shards import shard_name
from pipeline.tokenizer.bpe import BPETokenizer
from pipeline.tokenizer.library import LibraryTokenizer

SUMMARY_SCHEMA = pa.schema(
    [
        ("partition", pa.int32()),
        ("attempt", pa.int32()),
        ("documents", pa.int64()),
        ("tokens", pa.int64()),
        ("special_text_documents", pa.int64()),
        ("written", pa.string()),
    ]
)


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


def tokenize_partition(
    batches: Iterator[pa.RecordBatch],
    task: TaskAttempt,
    tokenizer: BPETokenizer | LibraryTokenizer,
    out_dir: str,
    tmp: str,
    dtype_name: str,
    eod: int,
    specials: tuple[str, ...],
    bos: tuple[int, ...] = (),
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: encode one partition's texts, write and publish its shard, yield a summary.

    Per Arrow batch: the column's UTF-8 buffer goes to our encoder as is, and its flat ids (each
    document followed by ``eod``) go to the writer in one call: no Python object per document. A
    library tokenizer (docs/tokenizer.md, Kinds) gets the batch's texts, ``bos`` before each."""
    part, attempt, inject = task.partition, task.attempt, task.inject_failure
    name = shard_name(part)
    tmp_prefix = storage.join(tmp, f"{name}.attempt-{attempt}-{task.attempt_id}")
    writer: IndexedDatasetWriter | None = None
    docs = tokens = special_docs = 0
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if writer is None:
                writer = IndexedDatasetWriter(
                    tmp_prefix, dtype=np.dtype(dtype_name), buffer_bytes=1 if inject else 4 << 20
                )
            column = batch.column("text")
            data, offsets = utf8_buffers(column)
            size = int(offsets[-1] - offsets[0])  # small inputs stay off the compiled path (numba_backend.py)
            if isinstance(tokenizer, LibraryTokenizer) and tokenizer.fast is not None and TOKENIZER.use("encode", size):
                ids, ends = tokenizer.encode_utf8_documents(data, offsets, bos, eod)  # ids as tiktoken's
            elif isinstance(tokenizer, LibraryTokenizer):
                texts = [t if t is not None else "" for t in column.to_pylist()]
                ids, ends = tokenizer.encode_documents(texts, bos, eod)  # special strings as plain text
            else:
                encoder = tokenizer if TOKENIZER.use("encode", size) else tokenizer.python_path()
                ids, ends = encoder.encode_utf8_batch(data, offsets, append_id=eod)  # special strings as plain text
            if inject:
                half = batch.num_rows // 2
                writer.add_documents(ids[: ends[half - 1] if half else 0], ends[:half])
                writer._flush()
                writer._bin.close()  # a torn attempt object on object stores, a partial file locally
                raise InjectedFailure(f"injected failure in {name} attempt {attempt}")
            writer.add_documents(ids, ends)
            tokens += int(ids.size)
            special_docs += count_special_text(column, specials, data[offsets[0] : offsets[-1]])
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
        [
            {
                "partition": part,
                "attempt": attempt,
                "documents": docs,
                "tokens": tokens,
                "special_text_documents": special_docs,
                "written": tmp_prefix if writer is not None else None,
            }
        ],
        schema=SUMMARY_SCHEMA,
    )
