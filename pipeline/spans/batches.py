"""Arrow batch functions of the spans stage's ``mapInArrow`` steps (docs/spans.md, Exact substrings); no Spark."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import ModuleType

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import PipelineError
from pipeline.spans import exact as exact_module
from pipeline.spans.exact import (
    _BYTE_VALUES,
    _P,
    Int64s,
    UInt64s,
    anchor_length,
    anchors_of,
    char_aligned,
    compiled,
    cut,
    merge_ranges,
    repeated_windows,
    token_bounds,
    token_hashes,
)

KIND_EXACT = "exact_substring"
# positions inside one document are 32-bit: a document is one value of an Arrow string column, under 2 GiB
ANCHORS = pa.schema(
    [("hash", pa.int64()), ("doc_id", pa.int64()), ("pos", pa.int32()), ("lo", pa.int32()), ("hi", pa.int32()),
     ("context_start", pa.int32()), ("context", pa.binary())]
)  # fmt: skip
_POSITIONS = ("pos", "lo", "hi", "context_start")  # ANCHORS' 32-bit columns
REMOVED = pa.schema(
    [("doc_id", pa.int64()), ("source", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
     ("kind", pa.string()), ("copies", pa.int64()), ("kept_doc_id", pa.int64()), ("kept_start", pa.int64())]
)  # fmt: skip
REMOVED_FIELDS = ("start", "end", "copies", "kept_doc_id", "kept_start")
RUN_FIELDS = [("start", pa.int64()), ("end", pa.int64()), ("copies", pa.int64()), ("kept_doc_id", pa.int64()),
              ("kept_start", pa.int64())]  # fmt: skip
RUN = pa.struct(RUN_FIELDS)
REWRITE_COLUMNS = pa.schema([("removed_bytes", pa.int64()), ("emptied", pa.bool_()), ("runs", pa.list_(RUN))])
CONFIRMED = pa.schema([("doc_id", pa.int64()), *RUN_FIELDS])


def _tokens(text: str, tokenizer: str) -> tuple[bytes, Int64s, Int64s, UInt64s]:
    data = text.encode("utf-8")
    starts, ends = token_bounds(data, tokenizer)
    return data, starts, ends, token_hashes(data, starts, ends)


def anchor_batches(batches: Iterable[pa.RecordBatch], k: int, tokenizer: str) -> Iterator[pa.RecordBatch]:
    """Documents (doc_id, text) -> one row per distinct anchor of its windows of ``k`` tokens
    (exact.anchor_ranges): the anchor's hash, doc_id, token position, the first and last window picking
    it, and those windows' bytes (``context``, from ``context_start`` in the document)."""
    for batch in batches:
        parts: dict[str, list[pa.Array]] = {name: [] for name in ANCHORS.names}
        for doc_id, text in zip(batch.column("doc_id").to_pylist(), batch.column("text").to_pylist(), strict=True):
            data, starts, ends, tokens = _tokens(text, tokenizer)
            kernels = compiled("anchor_ranges", len(data))
            positions, lows, highs, hashes = anchors_of(tokens, k, kernels)
            if len(positions) == 0:
                continue
            begin, finish = starts[lows], ends[highs + k - 1]
            parts["hash"].append(pa.array(hashes))
            parts["doc_id"].append(pa.array(np.full(len(positions), doc_id, dtype=np.int64)))
            for name, values in zip(_POSITIONS, (positions, lows, highs, begin), strict=True):
                parts[name].append(pa.array(values.astype(np.int32)))
            parts["context"].append(_slices(data, begin, finish, kernels))
        if parts["hash"]:
            yield pa.RecordBatch.from_arrays([pa.concat_arrays(parts[name]) for name in ANCHORS.names], schema=ANCHORS)


PACKED = pa.schema([("part", pa.int64()), ("packed", pa.binary())])
PARTITION_LIMIT = 2**31 - 1  # bytes of one partition's unpacked rows at most: Arrow's binary offsets are 32-bit
_PACK_ROWS = 1 << 18  # rows per packed blob at most (a blob stays far below Arrow's 2 GB binary limit)
_PACK_BYTES = 1 << 30  # bytes of blobs per PACKED batch at most, past the blob that crosses it (32-bit offsets)


def _pack_sorted(ordered: pa.RecordBatch, sorted_part: Int64s, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Rows already ordered by part (``sorted_part``) -> one PACKED row per part (or per _PACK_ROWS of it). The
    parts' IPC streams are written one after another into one buffer that becomes the ``packed`` column as it
    is (no copy per blob); a batch is yielded whenever that buffer passes _PACK_BYTES. Each stream's size is
    taken first (written to a counting sink, no bytes copied), so the buffer is allocated once at its size
    rather than grown by copies."""
    bounds = np.flatnonzero(np.concatenate(([True], sorted_part[1:] != sorted_part[:-1], [True])))
    pieces: list[tuple[int, pa.RecordBatch, int]] = []
    for head, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        for at in range(head, end, _PACK_ROWS):
            piece = ordered.slice(at, min(end, at + _PACK_ROWS) - at)
            counter = pa.MockOutputStream()
            with pa.ipc.new_stream(counter, schema) as writer:
                writer.write_batch(piece)
            pieces.append((int(sorted_part[head]), piece, counter.size()))
    first = 0
    while first < len(pieces):
        last, total = first, 0
        while last < len(pieces) and total < _PACK_BYTES:  # the blob that crosses the limit closes the batch
            total += pieces[last][2]
            last += 1
        data = pa.allocate_buffer(total)
        sink = pa.FixedSizeBufferWriter(data)
        ends = [0]
        for _, piece, size in pieces[first:last]:
            with pa.ipc.new_stream(sink, schema) as writer:
                writer.write_batch(piece)
            ends.append(ends[-1] + size)
            if sink.tell() != ends[-1]:
                raise ValueError("an IPC stream's size differs from its counted size")
        yield _packed_batch([key for key, _, _ in pieces[first:last]], ends, data)
        first = last


def _packed_batch(keys: list[int], ends: list[int], data: pa.Buffer) -> pa.RecordBatch:
    """PACKED rows: part ``keys[i]`` holds ``data[ends[i]:ends[i + 1]]``, the buffer used as the column's data."""
    offsets = pa.py_buffer(np.array(ends, dtype=np.int32))
    blobs = pa.BinaryArray.from_buffers(pa.binary(), len(keys), [None, offsets, data])
    return pa.RecordBatch.from_arrays([pa.array(keys, pa.int64()), blobs], schema=PACKED)


def packed(batches: Iterable[pa.RecordBatch], key: str, parts: int, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Rows (``schema``) -> one row (PACKED) per ``part`` (``key`` modulo ``parts``) of each batch, holding that
    part's rows as one Arrow IPC stream: a shuffle by part moves a few large rows instead of one per row, and
    every row of one key lands in one part."""
    for batch in batches:
        part = np.mod(batch.column(key).to_numpy(), parts)
        order = np.argsort(part)
        yield from _pack_sorted(batch.take(pa.array(order)), part[order], schema)


def blobs_of(column: pa.Array | pa.ChunkedArray) -> Iterator[pa.Buffer | None]:
    """The values of a binary column as buffers over its data (no copy), None for a null."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    for chunk in chunks:
        for value in chunk:
            yield value.as_buffer() if value.is_valid else None


def unpacked(blobs: Iterable[bytes | pa.Buffer | None], schema: pa.Schema) -> pa.Table:
    """The rows packed in ``blobs`` (:func:`packed`; None skipped) as one table; a partition too large for one
    Arrow binary column is a PipelineError naming the setting that splits it further."""
    tables = [pa.ipc.open_stream(blob).read_all() for blob in blobs if blob is not None]
    if not tables:
        return schema.empty_table()
    if sum(table.get_total_buffer_size() for table in tables) > PARTITION_LIMIT:
        raise PipelineError(
            f"spans: one partition's packed rows exceed {PARTITION_LIMIT} bytes; "
            "raise spark.settings.spark.sql.shuffle.partitions"
        )
    return pa.concat_tables(tables).combine_chunks()


_ANCHOR_TEXT_BYTES = 16 * 2**20  # text per slice of packed_anchor_batches


def text_slices(batches: Iterable[pa.RecordBatch], limit: int) -> Iterator[pa.RecordBatch]:
    """Batches with a ``text`` column -> the same rows in order, in slices of at most ``limit`` bytes of text (a
    longer document alone in its slice)."""
    for batch in batches:
        sizes = pc.binary_length(batch.column("text")).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        head, total = 0, 0
        for row, size in enumerate(sizes.tolist()):
            if total + size > limit and row > head:
                yield batch.slice(head, row - head)
                head, total = row, 0
            total += size
        if batch.num_rows > head or batch.num_rows == 0:
            yield batch.slice(head)


def _part_order(part: Int64s, parts: int) -> Int64s:
    """The rows in order of their part, in their own order inside a part (a stable sort: numpy's radix sort when
    the parts fit 16 bits), so each part's contexts are copied from the text in its order."""
    order: Int64s = np.argsort(part.astype(np.uint16) if parts <= 2**16 else part, kind="stable")
    return order


def packed_anchor_batches(
    batches: Iterable[pa.RecordBatch], k: int, tokenizer: str, parts: int
) -> Iterator[pa.RecordBatch]:
    """Documents (doc_id, text) -> the anchor rows of :func:`anchor_batches` packed by anchor hash (:func:`packed`),
    the contexts gathered once, already in part order; a batch is taken in slices of about _ANCHOR_TEXT_BYTES of
    text, so a task's memory does not grow with its Arrow batches (about 8 bytes of anchor rows per byte)."""
    for batch in text_slices(batches, _ANCHOR_TEXT_BYTES):
        if tokenizer == "bytes":
            texts = batch.column("text")
            size = int(pc.sum(pc.binary_length(texts)).as_py() or 0)
            kernels = compiled("anchor_ranges", size)
            if kernels is not None:
                yield from _packed_byte_anchors(batch.column("doc_id"), texts, k, parts, kernels)
                continue
        found: dict[str, list[Int64s]] = {name: [] for name in ("hash", "doc_id", "pos", "lo", "hi", "begin", "end")}
        datas: list[bytes] = []
        base = 0
        for doc_id, text in zip(batch.column("doc_id").to_pylist(), batch.column("text").to_pylist(), strict=True):
            data, starts, ends, tokens = _tokens(text, tokenizer)
            positions, lows, highs, hashes = anchors_of(tokens, k, compiled("anchor_ranges", len(data)))
            if len(positions) == 0:
                continue
            for name, values in (("hash", hashes), ("pos", positions), ("lo", lows), ("hi", highs)):
                found[name].append(values)
            found["doc_id"].append(np.full(len(positions), doc_id, dtype=np.int64))
            found["begin"].append(starts[lows])
            found["end"].append(ends[highs + k - 1])
            datas.append(data)
            base += len(data)
        if not datas:
            continue
        offsets = np.concatenate(([0], np.cumsum([len(d) for d in datas])[:-1])).astype(np.int64)
        shift = np.repeat(offsets, [len(h) for h in found["hash"]])
        column = {name: np.concatenate(values) for name, values in found.items()}
        part = np.mod(column["hash"], parts)
        order = _part_order(part, parts)
        corpus = b"".join(datas)
        contexts = _slices(
            corpus, (column["begin"] + shift)[order], (column["end"] + shift)[order], compiled("anchor_ranges", base)
        )
        ordered = pa.RecordBatch.from_arrays(
            [
                *(pa.array(column[name][order]) for name in ("hash", "doc_id")),
                *(pa.array(column[name][order].astype(np.int32)) for name in ("pos", "lo", "hi", "begin")),
                contexts,
            ],
            schema=ANCHORS,
        )
        yield from _pack_sorted(ordered, part[order], ANCHORS)


def _packed_byte_anchors(
    doc_ids: pa.Array, texts: pa.Array, k: int, parts: int, kernels: ModuleType
) -> Iterator[pa.RecordBatch]:
    """:func:`packed_anchor_batches` of one slice with the ``bytes`` tokenizer, compiled: the anchors of every
    document found in one call over the text column's own buffer (no Python string per document), the contexts
    gathered from that buffer. Same rows, in the same order, as the general path."""
    wide = pa.types.is_large_string(texts.type) or pa.types.is_large_binary(texts.type)
    buffers = texts.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
    offsets = offsets[texts.offset : texts.offset + len(texts) + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, dtype=np.uint8)
    if texts.null_count:  # a null text has no bytes
        ends = np.where(texts.is_valid().to_numpy(zero_copy_only=False), offsets[1:], offsets[:-1])
        data, offsets = kernels.gather(data, offsets[:-1].astype(np.int64), ends.astype(np.int64))
    offsets = offsets.astype(np.int64)
    docs, positions, lows, highs, hashes = kernels.byte_anchor_ranges(
        data, offsets, _BYTE_VALUES, k, anchor_length(k), _P, exact_module._MIX2
    )
    if len(docs) == 0:
        return
    part = np.mod(hashes, parts)
    order = _part_order(part, parts)
    doc_starts = offsets[docs]
    gathered, context_offsets = kernels.scatter(data, doc_starts + lows, doc_starts + highs + k, order)
    contexts = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(order), [None, pa.py_buffer(context_offsets), pa.py_buffer(gathered)]
    ).cast(pa.binary())
    ordered = pa.RecordBatch.from_arrays(
        [
            pa.array(hashes[order]),
            pa.array(doc_ids.to_numpy(zero_copy_only=False).astype(np.int64)[docs[order]]),
            *(pa.array(values[order].astype(np.int32)) for values in (positions, lows, highs, lows)),
            contexts,
        ],
        schema=ANCHORS,
    )
    yield from _pack_sorted(ordered, part[order], ANCHORS)


def unpacked_anchors(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Packed anchor rows (PACKED) -> all the anchor rows they hold (ANCHORS) as one batch, sorted by
    (hash, doc_id, pos): what :func:`decide_batches` reads. The whole partition is held at once."""
    table = unpacked((blob for batch in batches for blob in blobs_of(batch.column("packed"))), ANCHORS)
    if table.num_rows == 0:
        return
    order = _group_order(*(table.column(name).to_numpy() for name in ("hash", "doc_id", "pos")))
    yield from table.take(pa.array(order)).combine_chunks().to_batches()


def _group_order(hashes: Int64s, doc_ids: Int64s, positions: npt.NDArray[np.int32]) -> Int64s:
    """The order of anchor rows by (hash, doc_id, pos): the compiled sort (exact_numba.group_order) or numpy's."""
    kernels = compiled("repeated_windows", len(hashes) * 64)
    if kernels is not None:
        order: Int64s = np.argsort(hashes)  # numpy's sort of one key is far faster than a compiled loop's
        kernels.group_order(order, hashes, doc_ids, positions)
        return order
    ordered: Int64s = np.lexsort((positions, doc_ids, hashes))
    return ordered


def _slices(data: bytes, starts: Int64s, ends: Int64s, kernels: ModuleType | None = None) -> pa.Array:
    """The byte strings ``data[start:end]`` as one Arrow binary array, gathered with numpy (or ``kernels``)."""
    if kernels is not None:
        gathered, offsets = kernels.gather(np.frombuffer(data, dtype=np.uint8), starts, ends)
        return pa.LargeBinaryArray.from_buffers(
            pa.large_binary(), len(starts), [None, pa.py_buffer(offsets), pa.py_buffer(gathered)]
        ).cast(pa.binary())
    lengths = ends - starts
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    inside = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1], lengths) + np.repeat(starts, lengths)
    gathered = np.frombuffer(data, dtype=np.uint8)[inside]
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(starts), [None, pa.py_buffer(offsets), pa.py_buffer(gathered.tobytes())]
    ).cast(pa.binary())


def whole_groups(batches: Iterable[pa.RecordBatch], key: str) -> Iterator[pa.Table]:
    """Batches whose rows arrive grouped by ``key`` (equal keys next to each other) -> tables each holding
    whole groups: the rows of the last key of a batch wait for the next one."""
    pending: pa.Table | None = None
    for batch in batches:
        table = pa.Table.from_batches([batch])
        if pending is not None:
            table = pa.concat_tables([pending, table])
        if table.num_rows == 0:
            continue
        keys = table.column(key).to_numpy()
        differ = np.flatnonzero(keys != keys[-1])  # the last key's rows are the table's last rows
        cut_at = int(differ[-1]) + 1 if len(differ) else 0
        pending = table.slice(cut_at)
        if cut_at:
            yield table.slice(0, cut_at)
    if pending is not None and pending.num_rows:
        yield pending


def _repeated_python(
    table: pa.Table, contexts: pa.Array, heads: Int64s, sizes: Int64s, k: int, tokenizer: str
) -> dict[str, Int64s]:
    """exact.repeated_windows over each group ``[head, head + size)`` of ``table``'s rows (the Python path of
    exact_numba.repeated_windows_many, same result), rows numbered in the table."""
    columns = {name: table.column(name).to_pylist() for name in ("pos", "lo", "hi")}
    out: dict[str, list[int]] = {name: [] for name in ("row", "start", "end", "copies", "kept_row", "kept_at")}
    for head, size in zip(heads.tolist(), sizes.tolist(), strict=True):
        rows = range(head, head + size)
        found = repeated_windows(
            [columns["pos"][r] for r in rows], [columns["lo"][r] for r in rows], [columns["hi"][r] for r in rows],
            [contexts[r].as_py() for r in rows], k, tokenizer,
        )  # fmt: skip
        for at, start, end, copies, kept_row, kept_at in found:
            for name, value in zip(out, (head + at, start, end, copies, head + kept_row, kept_at), strict=True):
                out[name].append(value)
    return {name: np.array(values, dtype=np.int64) for name, values in out.items()}


def decide_batches(batches: Iterable[pa.RecordBatch], k: int, tokenizer: str) -> Iterator[pa.RecordBatch]:
    """Anchor rows (ANCHORS) grouped by hash -> one row per run of removed windows (CONFIRMED): in each hash
    group of two or more occurrences, the windows compared on their bytes (exact.repeated_windows). Rows that
    arrive sorted by (hash, doc_id, pos), as the stage sorts them, are taken as they are."""
    for table in whole_groups(batches, "hash"):
        hashes = table.column("hash").to_numpy()
        doc_ids, positions = table.column("doc_id").to_numpy(), table.column("pos").to_numpy()
        same = (hashes[1:] == hashes[:-1]) & (doc_ids[1:] == doc_ids[:-1])
        before = (hashes[1:] < hashes[:-1]) | ((hashes[1:] == hashes[:-1]) & (doc_ids[1:] < doc_ids[:-1]))
        if bool(np.any(before | (same & (positions[1:] < positions[:-1])))):
            order = np.lexsort((positions, doc_ids, hashes))
            table = table.take(order)
            hashes = hashes[order]
        heads = np.flatnonzero(np.concatenate(([True], hashes[1:] != hashes[:-1])))
        sizes = np.diff(np.concatenate((heads, [len(hashes)])))
        doc_ids = table.column("doc_id").to_numpy()
        context_starts = table.column("context_start").to_numpy().astype(np.int64)
        contexts = table.column("context").combine_chunks()
        keep = sizes >= 2
        kernels = compiled("repeated_windows", int(contexts.nbytes))
        if kernels is not None:
            buffers = contexts.buffers()
            offsets = np.frombuffer(buffers[1], dtype=np.int32)[contexts.offset : contexts.offset + len(contexts) + 1]
            found = kernels.repeated_windows_many(
                np.frombuffer(buffers[2], dtype=np.uint8), offsets.astype(np.int64), heads[keep], sizes[keep],
                *(table.column(name).to_numpy().astype(np.int64) for name in ("pos", "lo", "hi")), k,
                tokenizer == "words", kernels.BASE,
                kernels.SMALL_GROUP if tokenizer == "words" else kernels.SMALL_BYTES_GROUP,
            )  # fmt: skip
            out = dict(zip(("row", "start", "end", "copies", "kept_row", "kept_at"), found, strict=True))
        else:
            out = _repeated_python(table, contexts, heads[keep], sizes[keep], k, tokenizer)
        if len(out["row"]) == 0:
            continue
        row, kept = out["row"], out["kept_row"]
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(doc_ids[row]),
                pa.array(context_starts[row] + out["start"]),
                pa.array(context_starts[row] + out["end"]),
                pa.array(out["copies"]),
                pa.array(doc_ids[kept]),
                pa.array(context_starts[kept] + out["kept_at"]),
            ],
            schema=CONFIRMED,
        )


def merged_runs(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Runs of removed windows (CONFIRMED) -> the same bytes in fewer rows: each document's overlapping or touching
    runs of one batch merged into one, with the copies and kept copy of its first run (lowest start). A window
    belongs to one anchor, hence to one run, so no two runs of a document start at one byte: the rewrite's merge
    (:func:`exact_rewrite_batches`) of these rows gives what it gives of the runs they merge."""
    for batch in batches:
        if batch.num_rows == 0:
            continue
        doc_ids, starts, ends = (batch.column(name).to_numpy() for name in ("doc_id", "start", "end"))
        order = np.lexsort((starts, doc_ids))
        doc_ids, starts, ends = doc_ids[order], starts[order], ends[order]
        spread = np.int64(1) << np.int64(40)  # documents far apart: no range reaches the next document's
        dense = np.concatenate(([0], np.cumsum(doc_ids[1:] != doc_ids[:-1]))).astype(np.int64) * spread
        reach = np.maximum.accumulate(dense + ends)
        heads = np.flatnonzero(np.concatenate(([True], dense[1:] + starts[1:] > reach[:-1])))
        firsts = order[heads]
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(doc_ids[heads]),
                pa.array(starts[heads]),
                pa.array(np.maximum.reduceat(ends, heads)),
                *(batch.column(name).take(pa.array(firsts)) for name in ("copies", "kept_doc_id", "kept_start")),
            ],
            schema=CONFIRMED,
        )


def rewrite_text(text: str, starts: list[int], ends: list[int]) -> tuple[str, int]:
    """``text`` without the byte ranges (in any order), shrunk to whole characters; the bytes removed."""
    data = text.encode("utf-8")
    s, e = char_aligned(data, *merge_ranges(np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)))
    kept = cut(data, s, e)
    return kept.decode("utf-8"), len(data) - len(kept)


def exact_rewrite_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Documents with their removed windows (``windows``: list of start, end, copies, kept_doc_id, kept_start, or
    null) -> the documents' columns with the windows' union cut out of the text (exact.merge_ranges, each range
    shrunk to whole characters), the bytes removed, whether nothing but whitespace is left (``emptied``) and the
    merged ranges (``runs``, each with the copies and kept copy of the first window it holds)."""
    for batch in batches:
        windows = batch.column("windows")
        lengths = pc.list_value_length(windows).fill_null(0).to_numpy().astype(np.int64)
        values = pc.list_flatten(windows)
        f = {name: values.field(name).to_numpy(zero_copy_only=False).astype(np.int64) for name in REMOVED_FIELDS}
        owner = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        spread = np.int64(1) << np.int64(40)  # documents far apart: no range reaches the next document's
        starts, ends = owner * spread + f["start"], owner * spread + f["end"]
        order = np.lexsort((ends, starts))
        merged_starts, merged_ends = merge_ranges(starts[order], ends[order])
        firsts = order[np.searchsorted(starts[order], merged_starts)]
        docs = owner[firsts]
        merged_starts, merged_ends = merged_starts - docs * spread, merged_ends - docs * spread
        heads = np.concatenate(([0], np.cumsum(np.bincount(docs, minlength=len(lengths))))).astype(np.int64)
        runs = pa.ListArray.from_arrays(
            pa.array(heads.astype(np.int32)),
            pa.StructArray.from_arrays(
                [
                    pa.array(merged_starts),
                    pa.array(merged_ends),
                    *(pa.array(f[name][firsts]) for name in REMOVED_FIELDS[2:]),
                ],
                fields=list(RUN),
            ),
        )
        texts = batch.column("text")
        removed = np.zeros(len(lengths), dtype=np.int64)
        emptied = np.zeros(len(lengths), dtype=bool)
        changed = np.flatnonzero(heads[1:] > heads[:-1])
        if len(changed):
            rewritten = texts.to_pylist()
            for i in changed.tolist():
                data = rewritten[i].encode("utf-8")
                s, e = char_aligned(data, merged_starts[heads[i] : heads[i + 1]], merged_ends[heads[i] : heads[i + 1]])
                kept = cut(data, s, e)
                rewritten[i] = kept.decode("utf-8")
                removed[i] = len(data) - len(kept)
                emptied[i] = removed[i] > 0 and not rewritten[i].strip()
            texts = pa.array(rewritten, type=pa.string())
        columns = [
            texts if name == "text" else batch.column(name)
            for name in schema.names
            if name not in REWRITE_COLUMNS.names
        ]
        yield pa.RecordBatch.from_arrays([*columns, pa.array(removed), pa.array(emptied), runs], schema=schema)


def packed_rewrite_batches(
    batches: Iterable[pa.RecordBatch], schema: pa.Schema, part: str, runs: str
) -> Iterator[pa.RecordBatch]:
    """One partition's rows: first the packed runs (``runs`` set: CONFIRMED rows packed by doc_id), then the
    documents (``runs`` null; ``part`` their doc_id's part) -> :func:`exact_rewrite_batches` of each document with
    its runs. The runs of the partition are held at once; the documents stream."""
    blobs: list[pa.Buffer | None] = []
    found: pa.Table | None = None
    run_docs = np.zeros(0, dtype=np.int64)
    for batch in batches:
        is_doc = batch.column(runs).is_null()
        blob_rows = batch.filter(pc.invert(is_doc))
        if blob_rows.num_rows:
            if found is not None:
                raise ValueError("packed runs after documents: the rows must arrive runs first")
            blobs += blobs_of(blob_rows.column(runs))
        docs = batch.filter(is_doc)
        if docs.num_rows == 0:
            continue
        if found is None:
            table = unpacked(blobs, CONFIRMED)
            order = np.argsort(table.column("doc_id").to_numpy(), kind="stable")
            found = table.take(pa.array(order)).combine_chunks()
            run_docs = found.column("doc_id").to_numpy()
        doc_ids = docs.column("doc_id").to_numpy()
        lo = np.searchsorted(run_docs, doc_ids, side="left")
        hi = np.searchsorted(run_docs, doc_ids, side="right")
        lengths = hi - lo
        take = np.repeat(lo, lengths) + (
            np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        )
        mine = found.take(pa.array(take.astype(np.int64)))
        windows = pa.ListArray.from_arrays(
            pa.array(np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)),
            pa.StructArray.from_arrays(
                [mine.column(name).combine_chunks() for name, _ in RUN_FIELDS], fields=list(RUN)
            ),
        )
        names = [name for name in schema.names if name not in REWRITE_COLUMNS.names]
        with_windows = pa.RecordBatch.from_arrays(
            [*(docs.column(name) for name in names), windows], names=[*names, "windows"]
        )
        yield from exact_rewrite_batches([with_windows], schema)
