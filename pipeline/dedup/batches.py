"""Arrow-batch bodies of the dedup stage's ``mapInArrow`` steps (no Spark import).

Each function maps an iterator of ``pyarrow.RecordBatch`` to another, so Spark can run it on
executors over whole batches: signatures are vectorised per batch, never per row.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from pipeline.dedup.bands import band_keys
from pipeline.dedup.buckets import candidate_edges, exact_groups
from pipeline.dedup.hashes import shingle_hashes_and_counts
from pipeline.dedup.minhash import signatures_from_hashes
from pipeline.dedup.pair_jaccard import pair_jaccards
from pipeline.dedup.union_find import component_labels

PAIR_SCHEMA = pa.schema([("src", pa.int64()), ("dst", pa.int64()), ("jaccard", pa.float64())])
LABEL_ARROW_SCHEMA = pa.schema([("doc_id", pa.int64()), ("component", pa.int64())])
CANDIDATE_ARROW_SCHEMA = pa.schema(
    [("kind", pa.int8()), ("doc_id", pa.int64()), ("other", pa.int64()), ("short", pa.bool_())]
)
EXACT_MEMBER, CANDIDATE_EDGE = 0, 1  # the kinds of candidate_batches' rows
LABEL_BATCH_ROWS = 1 << 20  # component labels are returned in Arrow batches of at most this many rows


@dataclass(frozen=True)
class LshParams:
    """Everything a task needs to turn texts into band keys."""

    num_perm: int
    seed: int
    ngram: int
    scheme: str
    hash: str
    shingle: str
    max_shingles: int | None
    bands: int
    rows: int


LSH_KEYS = tuple(f.name for f in fields(LshParams))  # the MinHash parameters band keys depend on (a dedup index's)


FEATURE_SCHEMA = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("ntokens", pa.int64()),
        ("h1", pa.int64()),
        ("h2", pa.int64()),
        ("keys", pa.list_(pa.int64())),
    ]
)


def _content_hash(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """128-bit xxh3 of each text's UTF-8 bytes, as two signed 64-bit halves (exact-duplicate key)."""
    digests = b"".join(xxhash.xxh3_128_digest(t.encode("utf-8", "surrogatepass")) for t in texts)
    halves = np.frombuffer(digests, dtype="<i8").reshape(-1, 2) if texts else np.zeros((0, 2), np.int64)
    return halves[:, 0], halves[:, 1]


def doc_features(
    batches: Iterator[pa.RecordBatch], p: LshParams, min_tokens: int, carry: tuple[str, ...] = ()
) -> Iterator[pa.RecordBatch]:
    """(doc_id, text, *carry) -> (doc_id, token count, content hash, band keys, *carry); one pass over each text.

    Documents with fewer than ``min_tokens`` tokens get no band keys (null): they are never hashed
    together (docs/dedup.md, Shingles). The text itself never goes back to the JVM; the ``carry`` columns are passed
    through unchanged (so no join has to bring them back).
    """
    for batch in batches:
        if batch.num_rows == 0:
            continue
        texts = batch.column("text").to_pylist()
        hashes, offsets, ntok = shingle_hashes_and_counts(texts, p.ngram, p.shingle, p.max_shingles, p.hash)
        h1, h2 = _content_hash(texts)
        eligible = np.flatnonzero(ntok >= max(min_tokens, 1))
        band = np.zeros((0, p.bands), dtype=np.int64)
        if len(eligible):
            hashes, offsets = _docs_subset(hashes, offsets, eligible)
            sigs = signatures_from_hashes(hashes, offsets, p.num_perm, p.seed, p.scheme)
            band = band_keys(sigs, p.bands, p.rows).view(np.int64)
        keys = _key_lists(band, eligible, len(texts))
        carried = [batch.schema.field(name) for name in carry]
        yield pa.RecordBatch.from_arrays(
            [
                batch.column("doc_id"),
                pa.array(ntok),
                pa.array(h1),
                pa.array(h2),
                keys,
                *[batch.column(name) for name in carry],
            ],
            schema=pa.schema([*FEATURE_SCHEMA, *carried]) if carried else FEATURE_SCHEMA,
        )


def _docs_subset(hashes: np.ndarray, offsets: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hashes and offsets of the documents ``docs`` (sorted indices) only, as if hashed alone."""
    lengths = np.diff(offsets)
    if len(docs) == len(lengths):
        return hashes, offsets
    keep = np.zeros(len(lengths), dtype=bool)
    keep[docs] = True
    sub = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(lengths[docs], out=sub[1:])
    return hashes[np.repeat(keep, lengths)], sub


def _key_lists(band: np.ndarray, rows: np.ndarray, n: int) -> pa.ListArray:
    """list<int64> column of ``n`` rows: ``band[i]`` at row ``rows[i]``, null elsewhere (no Python loop)."""
    lengths = np.zeros(n, dtype=np.int32)
    lengths[rows] = band.shape[1]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    present = np.zeros(n, dtype=bool)
    present[rows] = True
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(band.reshape(-1), pa.int64()), mask=pa.array(~present))


def star_jaccards(
    batches: Iterator[pa.RecordBatch], ngram: int, shingle: str, max_shingles: int | None
) -> Iterator[pa.RecordBatch]:
    """(head, role, doc_id, text) rows sorted by (head, role) -> (src, dst=head, exact Jaccard).

    Each star arrives as its head (role 0) followed by its members (role 1), possibly across batch
    boundaries (the last head of a batch is carried into the next). A whole batch is verified at
    once by :func:`pipeline.dedup.pair_jaccard.pair_jaccards` (each document shingled once).
    """
    carried: tuple[int, str] | None = None  # (head doc_id, text) of the star open at the batch's end
    for batch in batches:
        heads = batch.column("head").to_numpy(zero_copy_only=False)
        roles = batch.column("role").to_numpy(zero_copy_only=False)
        docs = batch.column("doc_id").to_numpy(zero_copy_only=False)
        texts = batch.column("text").to_pylist()
        shift = 0 if carried is None else 1
        if carried is not None:
            texts = [carried[1], *texts]
        # position (in ``texts``) of the head row each row belongs to: the last role-0 row at or before it
        own = np.where(roles == 0, np.arange(len(roles)) + shift, -1)
        head_pos = np.maximum(np.maximum.accumulate(own), shift - 1) if len(own) else own  # 0: the carried head
        head_ids = np.where(
            head_pos >= shift, heads[np.maximum(head_pos - shift, 0)], -1 if carried is None else carried[0]
        )
        members = np.flatnonzero(roles == 1)
        if (head_pos[members] < 0).any() or (heads[members] != head_ids[members]).any():
            bad = heads[members][(head_pos[members] < 0) | (heads[members] != head_ids[members])][0]
            raise ValueError(f"star {bad}: members arrived without their head; rows must be sorted by (head, role)")
        values = pair_jaccards(texts, members + shift, head_pos[members], ngram, shingle, max_shingles)
        starts = np.flatnonzero(roles == 0)
        if len(starts):
            carried = (int(heads[starts[-1]]), texts[starts[-1] + shift])
        yield pa.RecordBatch.from_arrays(
            [pa.array(docs[members], pa.int64()), pa.array(heads[members], pa.int64()), pa.array(values, pa.float64())],
            schema=PAIR_SCHEMA,
        )


def component_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """All (src, dst) batches of the task -> (doc_id, component) batches of the whole graph."""
    parts = [
        (b.column("src").to_numpy(zero_copy_only=False), b.column("dst").to_numpy(zero_copy_only=False))
        for b in batches
        if b.num_rows
    ]
    src = np.concatenate([s for s, _ in parts]) if parts else np.zeros(0, np.int64)
    dst = np.concatenate([d for _, d in parts]) if parts else np.zeros(0, np.int64)
    nodes, labels = component_labels(src, dst)
    for lo in range(0, len(nodes), LABEL_BATCH_ROWS):
        yield pa.RecordBatch.from_arrays(
            [pa.array(nodes[lo : lo + LABEL_BATCH_ROWS]), pa.array(labels[lo : lo + LABEL_BATCH_ROWS])],
            schema=LABEL_ARROW_SCHEMA,
        )


def candidate_batches(batches: Iterable[pa.RecordBatch], exact_prepass: bool) -> Iterator[pa.RecordBatch]:
    """All (doc_id, h1, h2, keys, rank) feature batches of the corpus -> its exact groups and candidate edges.

    Rows of kind ``EXACT_MEMBER`` are ``(doc_id, other=rep, short)`` for every document whose text occurs
    more than once (none without ``exact_prepass``); rows of kind ``CANDIDATE_EDGE`` are star edges
    ``(doc_id=src, other=dst)`` between documents with band keys, exact copies other than their group's
    representative left out.
    """
    table = pa.Table.from_batches([b for b in batches if b.num_rows])
    if not table.num_rows:
        return
    doc_id = table.column("doc_id").to_numpy()
    keys = table.column("keys").combine_chunks()
    short = keys.is_null().to_numpy(zero_copy_only=False)
    pool = ~short
    if exact_prepass:
        rank_r = table.column("rank").combine_chunks().field("r").to_numpy(zero_copy_only=False).astype(np.int64)
        h1, h2 = table.column("h1").to_numpy(), table.column("h2").to_numpy()
        members, rep = exact_groups(h1, h2, rank_r, doc_id)
        pool[members[doc_id[members] != rep]] = False
        yield _candidate_rows(EXACT_MEMBER, doc_id[members], rep, short[members])
    kept = keys.filter(pa.array(pool))
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(pc.list_value_length(kept).to_numpy(zero_copy_only=False), out=offsets[1:])
    src, dst = candidate_edges(doc_id[pool], kept.flatten().to_numpy(), offsets)
    for lo in range(0, len(src), LABEL_BATCH_ROWS):
        hi = lo + LABEL_BATCH_ROWS
        yield _candidate_rows(CANDIDATE_EDGE, src[lo:hi], dst[lo:hi], np.zeros(len(src[lo:hi]), dtype=bool))


def _candidate_rows(kind: int, doc_id: np.ndarray, other: np.ndarray, short: np.ndarray) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(np.full(len(doc_id), kind, np.int8)), pa.array(doc_id), pa.array(other), pa.array(short)],
        schema=CANDIDATE_ARROW_SCHEMA,
    )
