"""BPE training: hand-worked tie-breaks, a naive recount-every-merge oracle, corpus.en at vocab 500."""

from __future__ import annotations

import pickle
from collections import Counter

import pytest
import regex

from pipeline.tokenizer import GPT2_PATTERN, BPETokenizer, count_pretokens

EOT = "<|endoftext|>"
TEXTS = ["corpus.en", "tinystories_sample.txt", "address.txt", "german.txt"]


def _merges(counts: dict[bytes, int], n: int) -> list[tuple[bytes, bytes]]:
    return BPETokenizer.train_from_counts(counts, 256 + 1 + n, [EOT]).merges


def test_tie_goes_to_greater_pair():
    assert _merges({b"ab": 1, b"cd": 1}, 2) == [(b"c", b"d"), (b"a", b"b")]


def test_tie_compares_first_bytes_before_second():
    # after (a,b): (ab, a) and (a, z) both count 3; b"ab" > b"a" decides, although b"z" > b"a"
    counts = {b"ab": 10, b"aba": 3, b"az": 3}
    assert _merges(counts, 3) == [(b"a", b"b"), (b"ab", b"a"), (b"a", b"z")]


def test_tie_compares_bytes_not_ids():
    # after (a,b): (ab, x) and (b, x) both count 2; b"b" > b"ab" although "ab" has the larger id
    counts = {b"ab": 10, b"abx": 2, b"bx": 2}
    assert _merges(counts, 3) == [(b"a", b"b"), (b"b", b"x"), (b"ab", b"x")]


def test_tie_on_second_when_first_equal_and_prefix():
    # (x, "ab") vs (x, "a"): equal first, b"ab" > b"a" (a prefix is smaller)
    counts = {b"ab": 20, b"xab": 4, b"xa": 4}
    assert _merges(counts, 2) == [(b"a", b"b"), (b"x", b"ab")]


def test_overlapping_occurrences_counted_and_merged_left_to_right():
    # "aaa" holds (a,a) twice -> weight 2*5 = 10 beats (b,c) at 9; merging gives [aa, a]
    counts = {b"aaa": 5, b"bc": 9}
    assert _merges(counts, 3) == [(b"a", b"a"), (b"b", b"c"), (b"aa", b"a")]


def test_hand_worked_low_lower_widest_newest(tmp_path):
    """The CS336 handout's example text, worked by hand with the GPT-2 pre-tokenizer (see comments)."""
    text = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"
    path = tmp_path / "tiny.txt"
    path.write_text(text, encoding="utf-8")
    # pre-tokens: "low" 1, " low" 4, " lower" 2, " widest" 3, " newest" 6
    expected = [
        (b"s", b"t"),  # e-s 9 ties s-t 9; (s,t) > (e,s)
        (b"e", b"st"),  # 9
        (b"o", b"w"),  # l-o 7 ties o-w 7; "o" > "l"
        (b"l", b"ow"),  # 7
        (b"w", b"est"),  # 6-way tie at 6 ( low, n, ne, ew, west): "w" is the greatest first
        (b"n", b"e"),  # tie at 6: "n" > " "
        (b"ne", b"west"),  # tie at 6: "ne" > " "
        (b" ", b"newest"),  # ( ,low) vs ( ,newest): second "newest" > "low"
        (b" ", b"low"),  # 6
        (b"w", b"i"),  # tie at 3 among ( ,w), (w,i), (i,d), (d,est): "w" greatest
    ]
    tok = BPETokenizer.train(path, vocab_size=256 + 1 + len(expected), special_tokens=[EOT])
    assert tok.merges == expected
    assert tok.vocab[256] == b"st" and tok.vocab[265] == b"wi" and tok.vocab[266] == EOT.encode()
    assert tok.token_id(EOT) == 266 and len(tok) == tok.vocab_size == 267


def naive_train(text: str, num_merges: int) -> list[tuple[bytes, bytes]]:
    """Definition of BPE training: recount every pair before each merge, take max (count, pair)."""
    counts: Counter[str] = Counter()
    for part in text.split(EOT):
        counts.update(regex.findall(GPT2_PATTERN, part))
    words = {tuple(bytes([b]) for b in w.encode("utf-8")): n for w, n in counts.items()}
    merges = []
    while len(merges) < num_merges:
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for w, n in words.items():
            for p in zip(w, w[1:], strict=False):
                pairs[p] += n
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        new_words: dict[tuple[bytes, ...], int] = {}
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + n
        words = new_words
    return merges


def test_incremental_equals_naive_recount(shared_fixtures, tmp_path):
    text = (shared_fixtures / "corpus.en").read_text(encoding="utf-8")[:40000]
    text += EOT + (shared_fixtures / "german.txt").read_text(encoding="utf-8")
    path = tmp_path / "sub.txt"
    path.write_text(text, encoding="utf-8")
    tok = BPETokenizer.train(path, vocab_size=500, special_tokens=[EOT])
    assert tok.merges == naive_train(text, 500 - 257)


@pytest.fixture(scope="module")
def trained(shared_fixtures) -> BPETokenizer:
    return BPETokenizer.train(shared_fixtures / "corpus.en", vocab_size=500, special_tokens=[EOT])


def test_corpus_en_vocab_500(trained, shared_fixtures):
    assert len(trained) == 500 and len(trained.merges) == 243
    assert sorted(trained.vocab) == list(range(500))
    assert trained.token_id(EOT) == 499
    assert all(trained.vocab[256 + k] == a + b for k, (a, b) in enumerate(trained.merges))
    for name in TEXTS:
        text = (shared_fixtures / name).read_text(encoding="utf-8")
        ids = trained.encode(text)
        assert trained.decode(ids) == text
        assert max(ids) < 500
    assert trained.encode(f"a{EOT}b") == [ord("a"), 499, ord("b")]


def test_train_from_counts_equals_train(trained, shared_fixtures):
    text = (shared_fixtures / "corpus.en").read_text(encoding="utf-8")
    half = len(text) // 2
    # as Spark does it: count per partition, add the Counters, merge on the driver
    counts = count_pretokens([text[:half]], [EOT]) + count_pretokens([text[half:]], [EOT])
    whole = count_pretokens([text], [EOT])
    assert EOT.encode() not in whole
    # the halves are cut mid-word, so they may differ from whole-text counts only around the cut
    assert sum((counts - whole).values()) <= 2
    tok = BPETokenizer.train_from_counts(whole, 500, [EOT], progress=False)
    assert tok.merges == trained.merges and tok.vocab == trained.vocab
    assert pickle.loads(pickle.dumps(tok)).merges == tok.merges


def test_vocab_too_small_rejected():
    with pytest.raises(ValueError):
        BPETokenizer.train_from_counts({b"ab": 1}, 256, [EOT])
