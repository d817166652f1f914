"""bench_vs_bigcode.py's helpers: the brute-force precision check (bench/dedup_precision.py, its shingles
corpora/shingles.py) and the shared corpus (bench/vs_corpus.py). Expected values are counted by hand from texts
built here."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bench.dedup_precision import sample, scan
from bench.vs_corpus import load, peer_parquet, prefix
from corpora.shingles import shingle_set

WORDS = [f"w{i}" for i in range(40)]


def test_shingles_lower_case_split_on_non_word_characters() -> None:
    assert shingle_set("Hello, WORLD!  hello--world", 2) == {"hello world", "world hello"}
    assert shingle_set("Ünïcode ÉTÉ", 5) == {"ünïcode été"}  # fewer than K tokens: one shingle of all
    assert shingle_set(" ... ", 5) == set()


def test_scan_finds_the_most_similar_other_document_and_the_given_pairs() -> None:
    texts = {
        0: " ".join(WORDS[:20]),  # 16 shingles
        1: " ".join(WORDS[:19]),  # 15 of them: 15/16
        2: " ".join(WORDS[:12]),  # 8 of them: 8/16
        3: " ".join(WORDS[20:40]),  # nothing in common with 0-2
        4: "a b",  # shares nothing
    }
    best, pairs = scan(texts.items(), {0: texts[0], 3: texts[3], 4: texts[4]}, {0: [2, 3]}, 5)
    assert best[0] == (1, pytest.approx(15 / 16))
    assert best[3] == (-1, 0.0) and best[4] == (-1, 0.0)
    assert pairs == {(0, 2): pytest.approx(8 / 16), (0, 3): 0.0}


def test_scan_matches_empty_documents_with_each_other() -> None:
    texts = [(0, "..."), (1, "w1 w2"), (2, "!!")]
    best, _ = scan(texts, {0: "..."}, {}, 5)
    assert best[0] == (2, 1.0)


def test_sample_is_seeded_and_bounded() -> None:
    assert sample(range(100), 10, 3) == sample(reversed(range(100)), 10, 3)
    assert len(set(sample(range(100), 10, 3))) == 10
    assert sample([5, 1], 10, 0) == [1, 5]


def _shard(path: Path, texts: list[str]) -> None:
    lines = [json.dumps({"source": "s", "path": f"p{i}", "text": t}) + "\n" for i, t in enumerate(texts)]
    path.write_text("".join(lines))


def test_prefix_takes_whole_documents_across_shards_in_name_order(tmp_path: Path) -> None:
    shards = tmp_path / "corpus"
    shards.mkdir()
    _shard(shards / "part-00001.jsonl", ["c" * 400_000, "d" * 10])
    _shard(shards / "part-00000.jsonl", ["a" * 400_000, "é" * 200_000])  # 400,000 UTF-8 bytes
    out = prefix(shards, 1.0, tmp_path / "out")
    texts = [json.loads(line)["text"] for line in out.read_text().splitlines()]
    assert [t[0] for t in texts] == ["a", "é", "c"]  # 1.2 MB: the third document crosses 1 MB
    corpus = load(out)
    assert corpus.text_bytes == 1_200_000
    raw = out.read_bytes()
    assert [json.loads(raw[o : raw.index(b"\n", o)])["text"][0] for o in corpus.offsets] == ["a", "é", "c"]
    assert len(set(corpus.digests)) == 3
    table = pq.read_table(peer_parquet(corpus, "content"))
    assert sorted(zip(table["doc"].to_pylist(), table["content"].to_pylist(), strict=True)) == list(enumerate(texts))
    with pytest.raises(SystemExit, match="--corpus"):
        prefix(tmp_path / "missing", None, tmp_path / "out")


def test_a_rebuilt_source_is_cut_again_not_read_from_the_cached_prefix(tmp_path: Path) -> None:
    shards = tmp_path / "corpus"
    shards.mkdir()
    _shard(shards / "part-00000.jsonl", ["a" * 1000, "b" * 1000])
    first = prefix(shards, None, tmp_path / "out")
    assert prefix(shards, None, tmp_path / "out") == first  # unchanged source: the cached copy
    _shard(shards / "part-00000.jsonl", ["c" * 1000, "d" * 1000, "e" * 10])  # the corpus rebuilt in place
    again = prefix(shards, None, tmp_path / "out")
    assert [json.loads(line)["text"][0] for line in again.read_text().splitlines()] == ["c", "d", "e"]
