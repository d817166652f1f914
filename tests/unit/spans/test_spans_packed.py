"""The exact-substring part's packed anchor shuffle (pipeline/spans/batches.py: packed_anchor_batches,
unpacked_anchors) against the suffix-array oracle (tests/spans_oracle.py), without Spark: the packed rows are
routed to partitions as a hash partitioner would (any routing that keeps one part in one partition), each
partition decided alone, and the merged runs compared with the oracle's ranges, on planted and adversarial
cases (periodic text, repeats exactly k tokens long at document edges, repeats one token short, a small
alphabet), with every anchor hash forced equal too."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from pipeline.numba_backend import SPANS
from pipeline.spans import exact
from pipeline.spans.batches import (
    REWRITE_COLUMNS,
    RUN,
    decide_batches,
    exact_rewrite_batches,
    merged_runs,
    packed_anchor_batches,
    unpacked_anchors,
)
from tests.backends import numba_backend
from tests.spans_oracle import oracle_ranges, oracle_word_ranges, planted_documents


def adversarial_documents(k: int) -> list[tuple[int, str]]:
    """Repeats of exactly ``k`` bytes as whole documents and at document edges, repeats of ``k - 1`` bytes (never
    removed), periodic text, overlapping copies, and random text over a three-letter alphabet."""
    rng = np.random.default_rng(48)
    exact_k = "".join(rng.choice(list("abcdefghij"), size=k))
    short = "".join(rng.choice(list("klmnopqrst"), size=k - 1))
    small = ["".join(rng.choice(list("xyz"), size=n)) for n in (300, 700, 1200)]
    return [
        (1, exact_k),  # a whole document of k bytes, repeated at the start and end of others
        (2, exact_k + " middle " + exact_k),
        (3, "lead " + exact_k),
        (4, short + " | " + short),  # k - 1 bytes repeated: nothing goes
        (5, short),
        (6, "ab" * (3 * k)),  # periodic, period 2
        (7, "abc" * k + "ab"),  # periodic, period 3, sharing windows with 6
        (8, exact_k[: k // 2] + exact_k + exact_k[k // 2 :]),  # overlapping copies of the same bytes
        (-9, small[0]),
        (9, small[1]),
        (20, small[2] + small[0][100:250]),
        (21, "z" * (2 * k + 1)),
    ]


def _merged(runs: list[tuple[int, ...]]) -> dict[int, list[tuple[int, int]]]:
    merged: dict[int, list[tuple[int, int]]] = {}
    for doc_id, start, end, *_ in sorted(runs):
        ranges = merged.setdefault(doc_id, [])
        if ranges and start <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], end))
        else:
            ranges.append((start, end))
    return merged


def _decided(
    docs: list[tuple[int, str]], k: int, tokenizer: str, parts: int, partitions: int, merge: bool = False
) -> list[tuple]:
    """Anchors packed in two input tasks, parts routed to ``partitions``, each decided on its own (and its runs
    merged per document with ``merge``, as the stage does)."""
    tasks = [docs[::2], docs[1::2]]
    packed = []
    for task in tasks:
        batch = pa.RecordBatch.from_pydict({"doc_id": [d for d, _ in task], "text": [t for _, t in task]})
        packed += list(packed_anchor_batches([batch], k, tokenizer, parts))
    assert all(0 <= p < parts for b in packed for p in b.column("part").to_pylist())
    runs = []
    for partition in range(partitions):
        mine = [
            b.filter(pa.array([p * 7 % partitions == partition for p in b.column("part").to_pylist()])) for b in packed
        ]
        decided = decide_batches(unpacked_anchors(mine), k, tokenizer)
        for out in merged_runs(decided) if merge else decided:
            runs += [tuple(r.values()) for r in pa.Table.from_batches([out]).to_pylist()]
    return sorted(runs)


CASES = [("planted", 50, "bytes"), ("adversarial", 50, "bytes"), ("adversarial", 8, "bytes"), ("planted", 6, "words")]


def _case(name: str, k: int, tokenizer: str) -> tuple[list[tuple[int, str]], dict[int, list[tuple[int, int]]]]:
    docs = planted_documents() if name == "planted" else adversarial_documents(k)
    return docs, oracle_ranges(docs, k) if tokenizer == "bytes" else oracle_word_ranges(docs, k)


@pytest.mark.parametrize(("name", "k", "tokenizer"), CASES)
@pytest.mark.parametrize("numba", [True, False])
def test_packed_anchors_decide_what_the_oracle_removes(name: str, k: int, tokenizer: str, numba: bool) -> None:
    docs, expected = _case(name, k, tokenizer)
    assert len(expected) >= 4, "too few repeats to compare anything"
    with numba_backend(SPANS, numba):
        for parts, partitions in ((1, 1), (5, 3), (64, 4)):
            assert _merged(_decided(docs, k, tokenizer, parts, partitions)) == expected, (parts, partitions)


@pytest.mark.parametrize(("name", "k", "tokenizer"), CASES)
def test_when_every_anchor_hash_collides_the_bytes_still_decide(name, k, tokenizer, monkeypatch) -> None:
    """A mixing constant of 0 gives every anchor the hash 0: each window is its own anchor and all rows of the
    corpus fall in one group, where only bytes can tell windows apart."""
    docs, expected = _case(name, k, tokenizer)
    monkeypatch.setattr(exact, "_MIX2", np.uint64(0))
    batch = pa.RecordBatch.from_pydict({"doc_id": [d for d, _ in docs], "text": [t for _, t in docs]})
    packed = list(packed_anchor_batches([batch], k, tokenizer, 16))
    assert sum(b.num_rows for b in packed) == 1  # one part: every hash is 0
    for numba in (True, False):
        with numba_backend(SPANS, numba):
            assert _merged(_decided(docs, k, tokenizer, 16, 4)) == expected


def test_a_partition_too_large_to_unpack_is_one_line_naming_the_setting(monkeypatch) -> None:
    from pipeline.errors import PipelineError
    from pipeline.spans import batches

    docs = planted_documents()
    batch = pa.RecordBatch.from_pydict({"doc_id": [d for d, _ in docs], "text": [t for _, t in docs]})
    rows = list(packed_anchor_batches([batch], 50, "bytes", 1))
    monkeypatch.setattr(batches, "PARTITION_LIMIT", 1000)
    with pytest.raises(PipelineError, match=r"^spans: .*spark\.settings\.spark\.sql\.shuffle\.partitions$"):
        list(unpacked_anchors(rows))


@pytest.mark.parametrize(("name", "k", "tokenizer"), CASES[:2])
def test_blobs_split_over_many_batches_decide_what_the_oracle_removes(name, k, tokenizer, monkeypatch) -> None:
    """Parts written into one shared buffer per batch: with a byte limit of 1 every blob closes its own batch and
    a part of more than _PACK_ROWS rows spans several blobs; the decisions are still the oracle's."""
    from pipeline.spans import batches

    docs, expected = _case(name, k, tokenizer)
    monkeypatch.setattr(batches, "_PACK_BYTES", 1)
    monkeypatch.setattr(batches, "_PACK_ROWS", 3)
    batch = pa.RecordBatch.from_pydict({"doc_id": [d for d, _ in docs], "text": [t for _, t in docs]})
    split = list(packed_anchor_batches([batch], k, tokenizer, 5))
    assert all(b.num_rows == 1 for b in split) and len(split) > 5
    assert _merged(_decided(docs, k, tokenizer, 5, 3)) == expected


def test_packed_rows_come_back_from_the_shared_buffer_unchanged() -> None:
    """batches.packed -> blobs_of -> unpacked gives every row once, in its key's part, nulls skipped."""
    from pipeline.spans.batches import CONFIRMED, blobs_of, packed, unpacked

    rng = np.random.default_rng(7)
    rows = {name: rng.integers(-(2**40), 2**40, size=500) for name in CONFIRMED.names}
    batch = pa.RecordBatch.from_pydict(rows, schema=CONFIRMED)
    out = list(packed([batch], "doc_id", 7, CONFIRMED))
    parts = [p for b in out for p in b.column("part").to_pylist()]
    assert sorted(parts) == sorted(set(parts)) and set(parts) <= set(range(7))
    for b in out:
        for part, blob in zip(b.column("part").to_pylist(), blobs_of(b.column("packed")), strict=True):
            assert set(np.mod(unpacked([blob], CONFIRMED).column("doc_id").to_numpy(), 7)) == {part}
    blobs = [*(blob for b in out for blob in blobs_of(b.column("packed"))), None]
    order = [(name, "ascending") for name in CONFIRMED.names]
    back = unpacked(blobs, CONFIRMED).sort_by(order)
    assert back.to_pydict() == pa.Table.from_batches([batch]).sort_by(order).to_pydict()


def _rewritten(docs: list[tuple[int, str]], runs: list[tuple]) -> list[dict]:
    """exact_rewrite_batches of ``docs`` with ``runs`` (CONFIRMED tuples): the texts, bytes and merged runs."""
    by_doc: dict[int, list[dict]] = {}
    for doc_id, *fields in runs:
        by_doc.setdefault(doc_id, []).append(
            dict(zip(("start", "end", "copies", "kept_doc_id", "kept_start"), fields, strict=True))
        )
    batch = pa.RecordBatch.from_pydict(
        {
            "doc_id": [d for d, _ in docs],
            "text": [t for _, t in docs],
            "windows": pa.array([by_doc.get(d) for d, _ in docs], type=pa.list_(RUN)),
        }
    )
    schema = pa.schema([("doc_id", pa.int64()), ("text", pa.string()), *REWRITE_COLUMNS])
    return pa.Table.from_batches(list(exact_rewrite_batches([batch], schema))).to_pylist()


@pytest.mark.parametrize(("name", "k", "tokenizer"), CASES)
def test_runs_merged_per_partition_rewrite_as_the_runs_themselves(name: str, k: int, tokenizer: str) -> None:
    """merged_runs in each partition leaves fewer rows, and the rewrite of them is the rewrite of every run: the
    same texts, removed bytes and merged ranges with their copies and kept copies."""
    docs, _ = _case(name, k, tokenizer)
    for parts, partitions in ((1, 1), (5, 3), (64, 4)):
        runs = _decided(docs, k, tokenizer, parts, partitions)
        merged = _decided(docs, k, tokenizer, parts, partitions, merge=True)
        assert len(merged) < len(runs)
        assert _rewritten(docs, merged) == _rewritten(docs, runs), (parts, partitions)


def test_merged_runs_keeps_the_first_run_s_copies_and_joins_touching_runs() -> None:
    from pipeline.spans.batches import CONFIRMED

    rows = [(7, 10, 20, 3, 1, 0), (7, 20, 25, 5, 2, 9), (7, 30, 40, 2, 1, 4), (7, 0, 12, 4, 3, 8), (1, 15, 19, 2, 1, 0)]
    batch = pa.RecordBatch.from_pylist([dict(zip(CONFIRMED.names, r, strict=True)) for r in rows], schema=CONFIRMED)
    out = pa.Table.from_batches(list(merged_runs([batch]))).to_pylist()
    assert [tuple(r.values()) for r in out] == [(1, 15, 19, 2, 1, 0), (7, 0, 25, 4, 3, 8), (7, 30, 40, 2, 1, 4)]


def test_text_slices_keep_every_row_in_order_within_the_limit() -> None:
    from pipeline.spans.batches import text_slices

    texts = ["a" * 5, "b" * 3, "c" * 9, "", "d" * 2, "e" * 4, None, "f"]
    batch = pa.RecordBatch.from_pydict({"doc_id": list(range(len(texts))), "text": texts})
    slices = list(text_slices([batch], 8))
    assert [s.column("text").to_pylist() for s in slices] == [
        ["a" * 5, "b" * 3], ["c" * 9], ["", "d" * 2, "e" * 4, None, "f"]
    ]  # fmt: skip
    assert list(text_slices([batch], 1000)) == [batch]


@pytest.mark.parametrize(("name", "k", "tokenizer"), CASES[:2])
def test_anchors_of_text_slices_decide_what_the_oracle_removes(name, k, tokenizer, monkeypatch) -> None:
    """With a slice limit of one byte every document is packed alone; the decisions are still the oracle's."""
    from pipeline.spans import batches

    docs, expected = _case(name, k, tokenizer)
    monkeypatch.setattr(batches, "_ANCHOR_TEXT_BYTES", 1)
    assert _merged(_decided(docs, k, tokenizer, 5, 3)) == expected


@pytest.mark.parametrize("k", [50, 8, 2, 1])
def test_compiled_byte_anchors_are_the_general_paths_rows(k: int) -> None:
    """With the bytes tokenizer and numba, packed_anchor_batches finds the anchors of a whole slice in one call
    over the text column's buffer; its packed rows (in order, in their parts) are those of the Python path, on a
    sliced batch (the column's buffer starts before the slice) holding a null text."""
    docs = planted_documents() + adversarial_documents(k)
    texts = [t for _, t in docs] + [None, "tail " * 20]
    batch = pa.RecordBatch.from_pydict(
        {"doc_id": [d for d, _ in docs] + [98, 99], "text": pa.array(texts, pa.string())}
    ).slice(1)

    def rows(numba: bool, given: pa.RecordBatch) -> tuple[list[int], pa.Table]:
        with numba_backend(SPANS, numba):
            out = list(packed_anchor_batches([given], k, "bytes", 16))
        parts = [p for b in out for p in b.column("part").to_pylist()]
        blobs = [pa.ipc.open_stream(v.as_buffer()).read_all() for b in out for v in b.column("packed")]
        return parts, pa.concat_tables(blobs)

    without_null = batch.filter(batch.column("text").is_valid())
    general_parts, general = rows(False, without_null)
    for given in (batch, without_null):
        parts, found = rows(True, given)
        assert parts == general_parts
        assert found.equals(general)
    assert general.num_rows > 100


def test_the_compiled_group_order_is_numpys_lexsort() -> None:
    """unpacked_anchors orders rows by (hash, doc_id, pos) with numpy's sort of the hashes and a compiled pass over
    each run of one hash (insertion for short runs, two stable sorts for long ones): numpy's lexsort's order."""
    from pipeline.spans import exact_numba

    rng = np.random.default_rng(7)
    n = 20_000
    hashes = rng.choice(np.array([-5, 0, 3, 2**62], dtype=np.int64), size=n // 2)  # long runs
    hashes = np.concatenate((hashes, rng.integers(-(2**63), 2**63 - 1, size=n // 2, dtype=np.int64) % 3000))
    doc_ids = rng.integers(-50, 50, size=n, dtype=np.int64)
    positions = rng.permutation(n).astype(np.int32)  # no two rows share (hash, doc_id, pos)
    order = np.argsort(hashes)
    exact_numba.group_order(order, hashes, doc_ids, positions)
    assert np.array_equal(order, np.lexsort((positions, doc_ids, hashes)))
