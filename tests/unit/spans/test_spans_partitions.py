"""The exact-substring part's shuffle partitions from its input's size (docs/spans.md, Exact substrings, step 2):
the planned anchor bytes per byte of text against the anchor rows measured on real text, and the rule."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.spans.batches import anchor_batches
from pipeline.spans.stage import TASK_ANCHOR_BYTES, anchor_bytes_per_byte, shuffle_partitions
from tests.spans_oracle import real_documents


@pytest.mark.parametrize("tokenizer", ["bytes", "words"])
def test_the_planned_anchor_bytes_bound_the_anchor_rows_of_real_text(tokenizer):
    docs = real_documents(300_000)
    table = pa.table({"doc_id": pa.array([d for d, _ in docs], pa.int64()), "text": [t for _, t in docs]})
    text_bytes = sum(len(t.encode("utf-8")) for _, t in docs)
    for k in (5, 20, 50, 100):
        rows = anchor_batches(table.to_batches(max_chunksize=64), k, tokenizer)
        measured = sum(batch.get_total_buffer_size() for batch in rows) / text_bytes
        planned = anchor_bytes_per_byte(k)
        assert measured <= planned, (k, measured, planned)
        if tokenizer == "bytes":  # a bound, not a wild overestimate: more partitions than needed cost time too
            assert measured >= 0.8 * planned, (k, measured, planned)


def test_a_small_input_keeps_the_sessions_partitions():
    assert shuffle_partitions(0, 50, 8) == 8
    assert shuffle_partitions(20_000_000, 50, 8) == 8  # 20 MB: under 200 MB of anchor rows in all
    assert shuffle_partitions(20_000_000, 50, 200) == 200  # a larger setting is kept as it is


@pytest.mark.parametrize("k", [10, 50, 200])
def test_each_partition_holds_at_most_the_planned_anchor_bytes_and_no_partition_is_wasted(k):
    for data_bytes in (10**8, 10**9, 10**10, 10**12, 3 * 10**12 + 7):
        partitions = shuffle_partitions(data_bytes, k, 8)
        anchor_bytes = data_bytes * anchor_bytes_per_byte(k)
        assert anchor_bytes / partitions <= TASK_ANCHOR_BYTES
        if partitions > 8:
            assert anchor_bytes / (partitions - 1) > TASK_ANCHOR_BYTES
    # 10 GB of text at k = 50: 7.59 bytes of anchor rows per byte, 256 MiB per partition
    assert shuffle_partitions(10**10, 50, 8) == 283
