"""The compiled anchor-group kernel of the exact-substring part (pipeline/spans/exact_numba.py) against its
Python path (pipeline.spans.exact.repeated_windows, whose ranges the Spark tests compare with the suffix-array
oracle): the same removed runs, copies and kept copies on planted cases and real text, in bytes and words, and
when every window hash collides."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from pipeline.numba_backend import SPANS
from pipeline.spans.batches import ANCHORS, anchor_batches, decide_batches
from tests.backends import numba_backend
from tests.oracles import require_oracle
from tests.spans_oracle import oracle_ranges, planted_documents, real_documents

CASES = [("planted", 50, "bytes"), ("planted", 6, "words"), ("real", 50, "bytes"), ("real", 8, "words")]


def _documents(name: str) -> list[tuple[int, str]]:
    return planted_documents() if name == "planted" else real_documents(400_000)


def _anchors(docs: list[tuple[int, str]], k: int, tokenizer: str) -> pa.Table:
    batch = pa.RecordBatch.from_pydict({"doc_id": [d for d, _ in docs], "text": [t for _, t in docs]})
    return pa.Table.from_batches(list(anchor_batches([batch], k, tokenizer)), schema=ANCHORS).sort_by("hash")


def _runs(anchors: pa.Table, k: int, tokenizer: str) -> list[tuple[int, ...]]:
    found = pa.Table.from_batches(list(decide_batches(anchors.to_batches(max_chunksize=5000), k, tokenizer)))
    return sorted(tuple(r.values()) for r in found.to_pylist())


@pytest.mark.parametrize(("name", "k", "tokenizer"), CASES)
def test_the_kernel_decides_what_the_python_path_decides(name: str, k: int, tokenizer: str) -> None:
    docs = _documents(name)
    anchors = _anchors(docs, k, tokenizer)
    results = {}
    for numba in (True, False):
        with numba_backend(SPANS, numba):
            results[numba] = _runs(anchors, k, tokenizer)
    assert len(results[False]) > 10, "too few repeats to compare anything"
    assert results[True] == results[False]
    if tokenizer == "bytes":  # and both are the suffix array's ranges once merged
        merged: dict[int, list[tuple[int, int]]] = {}
        for doc_id, start, end, *_ in results[True]:
            ranges = merged.setdefault(doc_id, [])
            if ranges and start <= ranges[-1][1]:
                ranges[-1] = (ranges[-1][0], max(ranges[-1][1], end))
            else:
                ranges.append((start, end))
        assert merged == oracle_ranges(docs, k)


@pytest.mark.parametrize(("name", "k", "tokenizer"), CASES)
def test_the_kernel_is_exact_when_window_hashes_collide(name: str, k: int, tokenizer: str, monkeypatch) -> None:
    """With base 0 a window's hash is its last byte (plus one): nearly every key collides, and the byte
    comparisons alone must give the same runs."""
    require_oracle("numba")
    from pipeline.spans import exact_numba

    anchors = _anchors(_documents(name), k, tokenizer)
    with numba_backend(SPANS, True):
        expected = _runs(anchors, k, tokenizer)
        monkeypatch.setattr(exact_numba, "BASE", np.uint64(0))
        assert _runs(anchors, k, tokenizer) == expected


@pytest.mark.parametrize(("name", "k", "tokenizer"), CASES)
@pytest.mark.parametrize("small", [0, 2, 1_000])
def test_pairwise_and_sorted_groups_decide_alike(name: str, k: int, tokenizer: str, small: int, monkeypatch) -> None:
    """Groups of at most SMALL_GROUP rows (SMALL_BYTES_GROUP with bytes: by intervals) are decided pair by pair,
    larger ones sorted: with every group sorted
    (0), only pairs compared (2) or every group compared pair by pair (1,000), the runs are the Python path's."""
    require_oracle("numba")
    from pipeline.spans import exact_numba

    anchors = _anchors(_documents(name), k, tokenizer)
    with numba_backend(SPANS, False):
        expected = _runs(anchors, k, tokenizer)
    sizes = np.unique(anchors.column("hash").to_numpy(), return_counts=True)[1]
    assert (sizes > 2).any() and ((sizes >= 2) & (sizes <= 8)).any(), "no group of each kind to decide"
    monkeypatch.setattr(exact_numba, "SMALL_GROUP", small)
    monkeypatch.setattr(exact_numba, "SMALL_BYTES_GROUP", small)
    with numba_backend(SPANS, True):
        assert _runs(anchors, k, tokenizer) == expected


@pytest.mark.parametrize(("name", "k", "tokenizer"), [*CASES, ("real", 1, "bytes"), ("real", 2, "words")])
def test_the_anchor_kernel_gives_the_python_path_s_anchors(name: str, k: int, tokenizer: str) -> None:
    docs = _documents(name) + [(99, ""), (98, "short"), (97, "a" * 300), (96, "ab" * 200 + "x")]
    tables = {}
    for numba in (True, False):
        with numba_backend(SPANS, numba):
            tables[numba] = _anchors(docs, k, tokenizer).sort_by(
                [("hash", "ascending"), ("doc_id", "ascending"), ("pos", "ascending")]
            )
    assert tables[True].num_rows > 50
    assert tables[True].equals(tables[False])
