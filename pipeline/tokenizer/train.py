"""Incremental byte-level BPE training (CS336 assignment 1) from pre-token counts.

Pair counts are kept weighted by pre-token frequency, with an index pair -> pre-tokens containing it.
A merge only revisits the pre-tokens that contain the merged pair and pushes the pairs whose count
changed onto a max-heap; stale heap entries are skipped when popped (lazy deletion).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping

from tqdm import tqdm

Pair = tuple[int, int]


class _Desc:
    """Wraps bytes so that heapq (a min-heap) pops the lexicographically greatest first."""

    __slots__ = ("value",)

    def __init__(self, value: bytes) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


def _pairs(word: list[int]) -> dict[Pair, int]:
    """Adjacent pairs of a word with their number of (possibly overlapping) occurrences."""
    out: dict[Pair, int] = {}
    for pair in zip(word, word[1:], strict=False):
        out[pair] = out.get(pair, 0) + 1
    return out


def merge_word(word: list[int], a: int, b: int, new: int) -> list[int]:
    """Replace every non-overlapping (a, b), scanning left to right, with ``new``."""
    out: list[int] = []
    i, n = 0, len(word)
    while i < n:
        if i + 1 < n and word[i] == a and word[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def train_merges(
    counts: Mapping[bytes, int], num_merges: int, progress: bool | None = False
) -> list[tuple[bytes, bytes]]:
    """Learn up to ``num_merges`` merges (fewer if no pair is left) from pre-token byte counts.

    Order: highest weighted pair count first; ties go to the greater (bytes of first, bytes of second).
    Token ids here are internal: 0..255 are the bytes, merge k creates id 256 + k.
    """
    token_bytes: list[bytes] = [bytes([i]) for i in range(256)]
    words: list[list[int]] = []
    freqs: list[int] = []
    for pretoken, n in counts.items():
        if len(pretoken) >= 2 and n > 0:
            words.append(list(pretoken))
            freqs.append(n)

    pair_counts: dict[Pair, int] = defaultdict(int)
    where: dict[Pair, set[int]] = defaultdict(set)
    for idx, word in enumerate(words):
        for pair, k in _pairs(word).items():
            pair_counts[pair] += k * freqs[idx]
            where[pair].add(idx)

    def entry(pair: Pair, count: int) -> tuple[int, _Desc, _Desc, Pair]:
        return (-count, _Desc(token_bytes[pair[0]]), _Desc(token_bytes[pair[1]]), pair)

    heap = [entry(p, c) for p, c in pair_counts.items() if c > 0]
    heapq.heapify(heap)
    merges: list[tuple[bytes, bytes]] = []
    # progress: False no bar, None a bar on a terminal only (tqdm's disable=None), True always
    bar = tqdm(total=num_merges, desc="bpe merges", unit="merge", disable=None if progress is None else not progress)
    while len(merges) < num_merges and heap:
        neg, _, _, pair = heapq.heappop(heap)
        if pair_counts.get(pair, 0) != -neg or neg == 0:
            continue  # stale entry
        a, b = pair
        new = len(token_bytes)
        token_bytes.append(token_bytes[a] + token_bytes[b])
        merges.append((token_bytes[a], token_bytes[b]))
        changed: set[Pair] = set()
        for idx in where.pop(pair, ()):
            word = words[idx]
            merged = merge_word(word, a, b, new)
            if len(merged) == len(word):
                continue
            before, after = _pairs(word), _pairs(merged)
            freq = freqs[idx]
            for p, k in before.items():
                if after.get(p, 0) != k:
                    pair_counts[p] -= k * freq
                    changed.add(p)
                    if p not in after and p != pair:
                        where[p].discard(idx)
            for p, k in after.items():
                if before.get(p, 0) != k:
                    pair_counts[p] += k * freq
                    changed.add(p)
                    where[p].add(idx)
            words[idx] = merged
        pair_counts.pop(pair, None)
        changed.discard(pair)
        for p in changed:
            c = pair_counts[p]
            if c > 0:
                heapq.heappush(heap, entry(p, c))
            else:
                del pair_counts[p]
                where.pop(p, None)
        bar.update(1)
    bar.close()
    return merges
