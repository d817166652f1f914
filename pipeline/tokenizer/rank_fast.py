"""Our numba encoder over a tiktoken rank file (docs/tokenizer.md, Kinds, Fast path): ids identical to
``tiktoken.Encoding(...).encode(text, disallowed_special=())`` for the patterns of the cl100k / Llama 3 / Qwen family.

tiktoken merges, in a pre-token, the adjacent pair whose concatenated bytes have the lowest rank, leftmost first,
and takes a pre-token that is a token itself as that token. So the merge table holds every pair of tokens whose
concatenation is a token (rank and id = that token's rank), and the tokens that merging their own bytes does not
reach are looked up whole before merging. The code-point classes are read from tiktoken's own regex engine, so a
Unicode version newer in the ``regex`` module changes nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

import numpy as np

from pipeline.tokenizer import patterns
from pipeline.tokenizer.encode import WordCache, _bpe_numba, utf8

# pattern -> (dollar, digits, marks) of pretokenize_numba.split_pretoken_end, and cased: o200k's matcher instead
# (pretokenize_numba.cased_pretoken_end)
FAST_PATTERNS: dict[str, tuple[bool, int, bool, bool]] = {
    patterns.CL100K: (True, 3, False, False),
    patterns.LLAMA3: (False, 3, False, False),
    patterns.QWEN2: (False, 1, False, False),
    patterns.QWEN35: (False, 1, True, False),
    patterns.O200K: (False, 3, False, True),
}
# S_OTHER, S_LETTER, S_NUMBER, S_SPACE, S_MARK of pretokenize_numba
_CLASSES = ((1, r"\p{L}"), (2, r"\p{N}"), (3, r"\s"), (4, r"\p{M}"))
_TABLE: dict[str, np.ndarray] = {}


def tiktoken_classes(cased: bool = False) -> np.ndarray:
    """The class of every code point (0 other, 1 ``\\p{L}``, 2 ``\\p{N}``, 3 ``\\s``, 4 ``\\p{M}``; ``cased``: those
    of ``patterns.CASED_CLASSES``) as tiktoken's regex engine sees it: a pattern of one class keeps only the text it
    matches, so encoding every code point with single-byte ranks and decoding gives that class's members."""
    key = "cased" if cased else "classes"
    if key not in _TABLE:
        import tiktoken

        every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
        out = np.zeros(0x110000, dtype=np.uint8)
        ranks = {bytes([b]): b for b in range(256)}
        for cls, pattern in patterns.CASED_CLASSES if cased else _CLASSES:
            enc = tiktoken.Encoding(f"class-{cls}", pat_str=pattern + "+", mergeable_ranks=ranks, special_tokens={})
            members = bytes(enc.encode_ordinary(every)).decode("utf-8")
            points = np.fromiter(map(ord, members), dtype=np.int64, count=len(members))
            if out[points].any():
                raise RuntimeError(f"code point classes overlap at {pattern}")
            out[points] = cls
        _TABLE[key] = out
    return _TABLE[key]


def _runs(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, values) of the runs of equal values: the class table in a few kB for pickling."""
    starts = np.concatenate([[0], np.flatnonzero(np.diff(table)) + 1]).astype(np.int64)
    return starts, table[starts]


def _unruns(starts: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    lengths = np.diff(np.append(starts, size))
    return np.repeat(values, lengths).astype(np.uint8)


def fast_split(pattern: str) -> tuple[bool, int, bool, bool] | None:
    """The kernel's parameters for ``pattern`` (a named pattern's regex), or None when it has no fast path."""
    return FAST_PATTERNS.get(pattern)


class RankFileBPE:
    """A rank file's tables for the numba kernel, built on the driver; pickles as flat arrays."""

    def __init__(self, ranks: Mapping[bytes, int], split: tuple[bool, int, bool, bool]) -> None:
        if any(bytes([b]) not in ranks for b in range(256)):
            raise ValueError("the rank file lacks a single byte")
        if max(ranks.values()) >= 1 << 31:
            raise ValueError("ranks must fit in int32")
        byte_ids = np.array([ranks[bytes([b])] for b in range(256)], dtype=np.int32)
        left, right, merged = [], [], []
        get = ranks.get
        for token, rank in ranks.items():
            for i in range(1, len(token)):
                a = get(token[:i])
                if a is not None:
                    b = get(token[i:])
                    if b is not None:
                        left.append(a)
                        right.append(b)
                        merged.append(rank)
        long_tokens = [(t, r) for t, r in ranks.items() if len(t) > 1]
        self._setup(split, byte_ids, (left, right, merged, merged), long_tokens, tiktoken_classes(split[3]))

    @classmethod
    def from_merges(
        cls,
        split: tuple[bool, int, bool, bool],
        byte_ids: np.ndarray,
        merges: tuple[list[int], list[int], list[int], list[int]],
        whole_tokens: list[tuple[bytes, int]],
        classes: np.ndarray,
    ) -> RankFileBPE:
        """The kernel's tables from explicit merges ``(left ids, right ids, ranks, merged ids)`` (the first of
        duplicate pairs wins), the tokens a pre-token may be whole (their bytes and ids) and the code-point
        classes."""
        self = cls.__new__(cls)
        self._setup(split, byte_ids, merges, whole_tokens, classes)
        return self

    def _setup(
        self,
        split: tuple[bool, int, bool, bool],
        byte_ids: np.ndarray,
        merges: tuple[list[int], list[int], list[int], list[int]],
        long_tokens: list[tuple[bytes, int]],
        classes: np.ndarray,
    ) -> None:
        self.split = split
        self.byte_ids = np.asarray(byte_ids, dtype=np.int32)
        left, right, rank, merged = merges
        self._left = np.array(left, dtype=np.int64)
        self._right = np.array(right, dtype=np.int64)
        self._rank = np.array(rank, dtype=np.int32)
        self._merged = np.array(merged, dtype=np.int32)
        self._class_runs = _runs(classes)
        long_tokens = [(t, r) for t, r in long_tokens if len(t) > 1]
        data = np.frombuffer(b"".join(t for t, _ in long_tokens), dtype=np.uint8)
        offsets = np.zeros(len(long_tokens) + 1, dtype=np.int64)
        np.cumsum([len(t) for t, _ in long_tokens], out=offsets[1:])
        ids = np.array([r for _, r in long_tokens], dtype=np.int32)
        kernels = _bpe_numba()
        unreached = (
            kernels.unreached_tokens(data, offsets, ids, self.byte_ids, self._pair_table())
            if long_tokens
            else np.zeros(0, np.int64)
        )
        whole = [long_tokens[i] for i in unreached.tolist()]
        w_data = np.frombuffer(b"".join(t for t, _ in whole), dtype=np.uint8).copy()
        w_off = np.zeros(len(whole) + 1, dtype=np.int64)
        np.cumsum([len(t) for t, _ in whole], out=w_off[1:])
        hashes = kernels.token_hashes(w_data, w_off) if whole else np.zeros(0, dtype=np.uint64)
        order = np.argsort(hashes, kind="stable")
        starts, ends = w_off[:-1][order], w_off[1:][order]
        self._whole = (
            hashes[order],
            np.concatenate([[0], np.cumsum(ends - starts)]).astype(np.int64),
            np.concatenate([w_data[a:b] for a, b in zip(starts, ends, strict=True)] or [np.zeros(0, np.uint8)]),
            np.array([whole[i][1] for i in order.tolist()], dtype=np.int32),
        )

    @property
    def unreached(self) -> int:
        """How many tokens only the whole-token lookup gives."""
        return int(self._whole[0].shape[0])

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("tables", None)
        return state

    def _pair_table(self) -> np.ndarray:
        bits = max(4, (2 * len(self._merged)).bit_length())
        # one entry per (left, right): the lowest rank first, as tiktoken takes it
        order = np.argsort(self._rank, kind="stable")
        table: np.ndarray = _bpe_numba().build_pair_table(
            self._left[order], self._right[order], self._rank[order], self._merged[order], bits
        )
        return table

    @cached_property
    def tables(self) -> tuple[Any, ...]:
        """The kernel's tables (classes, byte ids, pair table, split, whole tokens), built at first use."""
        classes = _unruns(*self._class_runs, 0x110000)
        return classes, self.byte_ids, self._pair_table(), self.split, self._whole

    def encode_utf8(
        self, data: np.ndarray, offsets: np.ndarray, cache: WordCache, append_id: int = -1
    ) -> tuple[np.ndarray, np.ndarray]:
        """int32 ids of the valid UTF-8 texts ``data[offsets[i]:offsets[i+1]]`` and the end of each text's ids."""
        classes, byte_ids, pairs, split, whole = self.tables
        kernel = _bpe_numba().encode_utf8_split
        ids, ends = kernel(data, offsets, append_id, classes, byte_ids, pairs, split, whole, *cache.args())
        return ids, ends

    def encode_texts(self, texts: list[str], cache: WordCache) -> tuple[np.ndarray, np.ndarray]:
        """Ids of Python strings (surrogates resolved as tiktoken does)."""
        parts = [utf8(t) for t in texts]
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=offsets[1:])
        return self.encode_utf8(np.frombuffer(b"".join(parts), dtype=np.uint8), offsets, cache)
