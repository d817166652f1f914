"""Exact-substring spans (docs/spans.md, Exact substrings): the kernels, then the stage's Spark plan against a
suffix-array oracle (tests/spans_oracle.py) on planted cases and on real text."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pipeline.config import load_config_text
from pipeline.spans import stage as spans_stage
from pipeline.spans.batches import rewrite_text
from pipeline.spans.exact import char_aligned, merge_ranges, text_windows, token_bounds, window_hashes
from pipeline.spans.stage import exact_partitions, run_spans
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.spans_oracle import oracle_ranges, oracle_text, oracle_word_ranges, planted_documents, real_documents

REPO = Path(__file__).resolve().parents[3]


def test_window_hashes_are_equal_exactly_for_equal_windows_on_a_small_alphabet():
    rng = np.random.default_rng(7)
    tokens = rng.integers(1, 4, size=400).astype(np.uint64) * np.uint64(0x100000001B3)
    for k in (1, 2, 3, 5, 8, 13, 50):
        hashes = window_hashes(tokens, k)
        windows = [tuple(tokens[i : i + k].tolist()) for i in range(len(tokens) - k + 1)]
        assert len(hashes) == len(windows)
        by_window: dict[tuple, set[int]] = {}
        for w, h in zip(windows, hashes.tolist(), strict=True):
            by_window.setdefault(w, set()).add(h)
        assert all(len(h) == 1 for h in by_window.values()), k  # equal windows, equal hashes
        assert len({next(iter(h)) for h in by_window.values()}) == len(by_window), k  # no collision here


def test_words_are_runs_of_non_whitespace_bytes_and_windows_span_them():
    text = "  héllo\tworld \n\nfoo  bar\x0bbaz "
    data = text.encode("utf-8")
    starts, ends = token_bounds(data, "words")
    expected = [(m.start(), m.end()) for m in re.finditer(rb"[^\t\n\x0b\x0c\r ]+", data)]
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == expected
    _, w_starts, w_ends = text_windows(data, 2, "words")
    assert [data[s:e] for s, e in zip(w_starts, w_ends, strict=True)] == [
        "héllo\tworld".encode(),
        b"world \n\nfoo",
        b"foo  bar",
        b"bar\x0bbaz",
    ]
    assert len(text_windows(data, 6, "words")[0]) == 0


def test_merge_ranges_is_the_union():
    rng = np.random.default_rng(3)
    starts = rng.integers(0, 200, size=60)
    ends = starts + rng.integers(1, 15, size=60)
    covered = set().union(*(range(s, e) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)))
    ms, me = merge_ranges(starts, ends)
    assert set().union(*(range(s, e) for s, e in zip(ms.tolist(), me.tolist(), strict=True))) == covered
    assert all(a < b for a, b in zip(me[:-1].tolist(), ms[1:].tolist(), strict=True))  # disjoint, not touching


def test_char_aligned_keeps_whole_characters_only():
    data = "aé€b".encode()  # a | é: bytes 1-2 | €: bytes 3-5 | b
    s, e = char_aligned(data, np.array([0, 2, 4]), np.array([2, 4, 7]))
    assert list(zip(s.tolist(), e.tolist(), strict=True)) == [(0, 1), (6, 7)]


def _context(tmp_path: Path, spark, k: int, tokenizer: str) -> RunContext:
    text = (REPO / "conf" / "local.yaml").read_text()
    overrides = [f"output={tmp_path / 'run'}", f"spans.exact_substring.min_tokens={k}",
                 f"spans.exact_substring.tokenizer={tokenizer}"]  # fmt: skip
    return RunContext(load_config_text(text, overrides), spark=spark)


def _run(spark, tmp_path: Path, docs: list[tuple[int, str]], k: int, tokenizer: str = "bytes"):
    ctx = _context(tmp_path, spark, k, tokenizer)
    sources = ("web", "wiki", "forum")
    rows = [(doc_id, sources[i % 3], text) for i, (doc_id, text) in enumerate(docs)]
    ctx.write_table(spark.createDataFrame(rows, "doc_id long, source string, text string"), layout.SURVIVORS)
    counts = run_spans(ctx, layout.SURVIVORS)
    run = tmp_path / "run"
    removed = pq.read_table(run / layout.SPANS_REMOVED).to_pylist()
    kept = {r["doc_id"]: r["text"] for r in pq.read_table(run / layout.SPANS_DOCUMENTS).to_pylist()}
    emptied = {r["doc_id"] for r in pq.read_table(run / layout.SPANS_EMPTIED).to_pylist()}
    return counts, removed, kept, emptied


def _check_against_oracle(docs, k, counts, removed, kept, emptied, expected=None):
    expected = oracle_ranges(docs, k) if expected is None else expected
    found: dict[int, list[tuple[int, int]]] = {}
    for row in removed:
        found.setdefault(row["doc_id"], []).append((row["start"], row["end"]))
        assert row["kind"] == "exact_substring" and row["copies"] >= 2
        assert (row["kept_doc_id"], row["kept_start"]) < (row["doc_id"], row["start"])
    assert {d: sorted(r) for d, r in found.items()} == expected
    texts = dict(docs)
    for doc_id, text in docs:
        want = oracle_text(text, expected.get(doc_id, []))
        if doc_id in emptied:
            assert not want.strip() and doc_id not in kept
        else:
            assert kept[doc_id] == want, doc_id
    assert sum(row["read"] for row in counts["sources"].values()) == len(texts)
    for row in counts["sources"].values():
        assert row["read"] == row["documents"] + row["spans_emptied"]
    assert sum(row["spans_emptied"] for row in counts["sources"].values()) == len(emptied)
    for source, row in counts["sources"].items():  # the ranges counted are the rows written, per source
        assert row["removed_ranges"]["exact_substring"] == sum(r["source"] == source for r in removed), source


@pytest.mark.spark
def test_exact_substrings_equal_the_suffix_array_oracle_on_planted_cases(spark, tmp_path):
    docs = planted_documents()
    counts, removed, kept, emptied = _run(spark, tmp_path, docs, 50)
    expected = oracle_ranges(docs, 50)
    assert 12 not in expected and 13 not in expected  # the fox sentence split over a boundary never counts
    assert -5 not in expected and 10 in expected and 11 in expected  # the licence's first copy is doc -5's
    assert 14 in expected and 15 in expected and 16 in expected  # inside one document; overlapping; a run
    _check_against_oracle(docs, 50, counts, removed, kept, emptied)


@pytest.mark.spark
def test_the_partitions_grow_with_the_input_and_the_ranges_stay_the_oracles(spark, tmp_path, monkeypatch):
    docs = planted_documents()
    text_bytes = sum(len(t.encode("utf-8")) for _, t in docs)
    session = int(spark.conf.get("spark.sql.shuffle.partitions"))
    monkeypatch.setattr(spans_stage, "TASK_ANCHOR_BYTES", text_bytes // 2)  # as if the input were far larger
    counts, removed, kept, emptied = _run(spark, tmp_path, docs, 50)
    ctx = _context(tmp_path, spark, 50, "bytes")
    partitions = exact_partitions(ctx, layout.SURVIVORS, 50)
    assert session < partitions <= 6 * spans_stage.anchor_bytes_per_byte(50)  # the Parquet data: about the text
    written = list((tmp_path / "run" / layout.SPANS_DOCUMENTS).glob("*.parquet"))  # one file per partition with rows
    assert len(written) > session, "the cuts ran on the session's partitions, not the input's"
    _check_against_oracle(docs, 50, counts, removed, kept, emptied)
    monkeypatch.undo()  # a small input: the session's partitions
    assert exact_partitions(ctx, layout.SURVIVORS, 50) == session


@pytest.mark.spark
@pytest.mark.same_plan
def test_exact_substrings_equal_the_suffix_array_oracle_on_real_text(spark, tmp_path):
    docs = real_documents(1_500_000)
    counts, removed, kept, emptied = _run(spark, tmp_path, docs, 50)
    assert len(removed) > 100, "too few repeats in the real text to compare anything"
    _check_against_oracle(docs, 50, counts, removed, kept, emptied)


def test_rewrite_cuts_ranges_given_in_any_order():
    text = "0123456789abcdef"
    assert rewrite_text(text, [10, 2], [12, 4]) == ("01456789cdef", 4)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("spans.exact_substring.min_tokens=0", "spans.exact_substring.min_tokens"),
        ("spans.exact_substring.tokenizer=chars", "spans.exact_substring.tokenizer"),
        ("spans.sentences.span=0", "spans.sentences.span"),
        ("spans.sentences.min_doc_words=-1", "spans.sentences.min_doc_words"),
        ("spans.lines.min_repeats=1", "spans.lines.min_repeats"),
        ("spans.lines.min_repeats=2.5", "spans.lines.min_repeats"),
        ("spans.lines.min_repeats=true", "spans.lines.min_repeats"),
        ("spans.lines.min_repeat=2", "spans.lines.min_repeat"),
    ],
)
def test_bad_spans_config_is_one_line_naming_the_key(override, key):
    from pipeline.config.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        load_config_text((REPO / "conf" / "local.yaml").read_text(), [override])
    assert f"'{key}'" in str(caught.value) and "\n" not in str(caught.value)


def test_the_stage_runs_only_with_its_section():
    from pipeline.run.registry import stage

    text = (REPO / "conf" / "local.yaml").read_text()
    assert not stage("spans").applies(load_config_text(text))
    assert stage("spans").applies(load_config_text(text, ["spans.exact_substring.min_tokens=50"]))


def test_equal_windows_have_the_same_anchor_offset_and_hash():
    from pipeline.spans.exact import anchor_length, window_anchors

    rng = np.random.default_rng(11)
    tokens = rng.integers(1, 3, size=600).astype(np.uint64) * np.uint64(977)
    for k in (1, 2, 3, 7, 50):
        anchors, short = window_anchors(tokens, k)
        assert len(anchors) == len(tokens) - k + 1 and len(short) == len(tokens) - anchor_length(k) + 1
        seen: dict[tuple, tuple[int, int]] = {}
        for i, a in enumerate(anchors.tolist()):
            assert i <= a <= i + k - anchor_length(k)  # the anchor lies inside its window
            key = tuple(tokens[i : i + k].tolist())
            assert seen.setdefault(key, (a - i, int(short[a]))) == (a - i, int(short[a])), k


@pytest.mark.spark
@pytest.mark.same_plan
def test_word_windows_equal_a_brute_force_oracle_on_planted_cases(spark, tmp_path):
    docs = planted_documents()
    counts, removed, kept, emptied = _run(spark, tmp_path, docs, 6, "words")
    expected = oracle_word_ranges(docs, 6)
    assert 10 in expected and 14 in expected and -5 not in expected
    _check_against_oracle(docs, 6, counts, removed, kept, emptied, expected)


def test_an_anchor_group_compares_windows_on_their_bytes_so_a_hash_collision_removes_nothing():
    """decide_batches gets anchor rows sharing one (made-up) hash: only windows whose bytes equal an earlier
    occurrence's at the same offset from the anchor are removed; B's windows holding X (a collision) stay."""
    import pyarrow as pa

    from pipeline.spans.batches import ANCHORS, decide_batches

    rows = [  # k = 4 bytes: (doc_id, pos, lo, hi, context_start, context); offset of window i = pos - lo - i
        (1, 3, 0, 3, 10, b"abcdefg"),  # A: abcd (offset 3), bcde (2), cdef (1), defg (0)
        (2, 8, 5, 8, 0, b"abcdXfg"),  # B: abcd (3), then windows holding X
        (0, 5, 0, 3, 0, b"zzabcde"),  # C, the first document: zzab (5), zabc (4), abcd (3), bcde (2)
    ]
    batch = pa.RecordBatch.from_pydict(
        {
            "hash": [7] * 3, "doc_id": [r[0] for r in rows], "pos": [r[1] for r in rows],
            "lo": [r[2] for r in rows], "hi": [r[3] for r in rows], "context_start": [r[4] for r in rows],
            "context": [r[5] for r in rows],
        },
        schema=ANCHORS,
    )  # fmt: skip
    found = pa.Table.from_batches(list(decide_batches([batch.slice(0, 2), batch.slice(2)], 4, "bytes"))).to_pylist()
    got = sorted((r["doc_id"], r["start"], r["end"], r["copies"], r["kept_doc_id"], r["kept_start"]) for r in found)
    assert got == [
        (1, 10, 15, 3, 0, 2),  # A's abcd and bcde: one run, copies and kept copy of its first window (C's abcd)
        (2, 0, 4, 3, 0, 2),  # B's abcd only
    ]
