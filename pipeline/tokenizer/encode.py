"""Encoding one pre-token: apply merges by rank (lowest first) until none applies; a bounded cache."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

Pair = tuple[int, int]
MergeTable = dict[Pair, tuple[int, int]]  # (left id, right id) -> (rank, merged id)


def build_merge_table(merges: Sequence[tuple[bytes, bytes]], token_ids: Mapping[bytes, int]) -> MergeTable:
    """Map each merge, as a pair of token ids, to its rank and the id of the merged token."""
    table: MergeTable = {}
    for rank, (a, b) in enumerate(merges):
        try:
            pair = (token_ids[a], token_ids[b])
            merged = token_ids[a + b]
        except KeyError as exc:
            raise ValueError(f"merge {rank} {a!r} + {b!r} uses a token missing from the vocabulary") from exc
        table.setdefault(pair, (rank, merged))
    return table


def bpe_ids(data: bytes, byte_ids: Sequence[int], table: MergeTable) -> list[int]:
    """Token ids of one pre-token's bytes: repeatedly merge the lowest-ranked adjacent pair.

    All occurrences of that pair are merged in one left-to-right pass (the same result as merging
    the leftmost occurrence one at a time, as GPT-2 and tiktoken do).
    """
    ids = [byte_ids[b] for b in data]
    get = table.get
    while len(ids) > 1:
        best_rank = -1
        best: Pair | None = None
        merged = -1
        for pair in zip(ids, ids[1:], strict=False):
            hit = get(pair)
            if hit is not None and (best is None or hit[0] < best_rank):
                best_rank, merged = hit
                best = pair
        if best is None:
            break
        a, b = best
        out: list[int] = []
        i, n = 0, len(ids)
        while i < n:
            if i + 1 < n and ids[i] == a and ids[i + 1] == b:
                out.append(merged)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids


class PretokenCache(dict):
    """dict pre-token (str) -> token ids that computes misses; cleared when it reaches ``max_entries``."""

    def __init__(self, compute: Callable[[str], list[int]], max_entries: int = 1 << 17) -> None:
        super().__init__()
        self.compute = compute
        self.max_entries = max_entries

    def __missing__(self, key: str) -> list[int]:
        value = self.compute(key)
        if len(self) >= self.max_entries:
            self.clear()
        self[key] = value
        return value
