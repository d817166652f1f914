"""Encoding one pre-token: apply merges by rank (lowest first) until none applies; a bounded cache."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from types import ModuleType

import numpy as np

from pipeline.numba_backend import TOKENIZER
from pipeline.tokenizer.patterns import CASED_CLASSES
from pipeline.tokenizer.train import merge_word

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
        ids = merge_word(ids, best[0], best[1], merged)
    return ids


class PretokenCache(dict[str, list[int]]):
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


# ----------------------------------------------------------------- numba backend
numba_enabled = TOKENIZER.enabled  # whether new tokenizers encode with the numba kernels
set_numba = TOKENIZER.set  # force the backend of tokenizers built from now on (None = auto-detect)


class WordCache:
    """The numba kernels' pre-token cache: fixed-size arrays, about 112 bytes per entry.

    Holds at most ``max_entries`` pre-tokens: 64-byte entries, an index of 16 bytes per entry, and
    pools for the bytes beyond 16 (8 per entry on average) and more than 4 ids (4 per entry).
    It is cleared when full, so its memory is fixed when it is created. ``max_entries=0`` disables it.
    """

    def __init__(self, max_entries: int) -> None:
        if not 0 <= max_entries < 1 << 26:
            raise ValueError(f"cache entries {max_entries} not in [0, 2**26)")
        self.max_entries = max_entries
        n_slots = 1 << (2 * max_entries - 1).bit_length() if max_entries > 0 else 0
        self.index = np.zeros(n_slots, dtype=np.uint64)
        self.entries = np.zeros((max_entries, 8), dtype=np.uint64)
        self.bytes_pool = np.zeros(8 * max_entries, dtype=np.uint8)
        self.ids_pool = np.zeros(4 * max_entries, dtype=np.int32)
        self.state = np.array([0, 0, 0, max_entries], dtype=np.int64)  # entries, bytes, ids used; max

    def __len__(self) -> int:
        return int(self.state[0])

    @property
    def nbytes(self) -> int:
        """Memory held by the cache's arrays."""
        return sum(a.nbytes for a in self.args())

    def clear(self) -> None:
        self.index[:] = 0
        self.state[:3] = 0

    def args(self) -> tuple[np.ndarray, ...]:
        return (self.index, self.entries, self.bytes_pool, self.ids_pool, self.state)


def char_classes() -> np.ndarray:
    """Class of every code point as the ``regex`` module sees it (0 other, 1 \\p{L}, 2 \\p{N}, 3 \\s).

    Built once per process from the runs of each class in the string of all code points (one
    ``finditer`` per class, so a fresh Spark Python worker starts encoding sooner)."""
    if "classes" not in _classes:
        import regex

        every = "".join(map(chr, range(0x110000)))
        out = np.zeros(0x110000, dtype=np.uint8)
        for cls, pattern in ((1, r"\p{L}+"), (2, r"\p{N}+"), (3, r"\s+")):
            for run in regex.finditer(pattern, every):
                if out[run.start() : run.end()].any():
                    raise RuntimeError(f"code point classes overlap at {pattern}")
                out[run.start() : run.end()] = cls
        _classes["classes"] = out
    return _classes["classes"]


_classes: dict[str, np.ndarray] = {}


def split_classes() -> np.ndarray:
    """As :func:`char_classes` with ``\\p{M}`` as class 4: the classes of ``pretokenize_numba.split_pretoken_end``
    as the ``regex`` module (our Python pre-tokenizer) sees them."""
    if "split" not in _classes:
        import regex

        every = "".join(map(chr, range(0x110000)))
        out = np.zeros(0x110000, dtype=np.uint8)
        for cls, pattern in ((1, r"\p{L}+"), (2, r"\p{N}+"), (3, r"\s+"), (4, r"\p{M}+")):
            for run in regex.finditer(pattern, every):
                if out[run.start() : run.end()].any():
                    raise RuntimeError(f"code point classes overlap at {pattern}")
                out[run.start() : run.end()] = cls
        _classes["split"] = out
    return _classes["split"]


def cased_classes() -> np.ndarray:
    """The classes of ``pretokenize_numba.cased_pretoken_end`` (o200k's pattern: Lu and Lt, Ll, Lm and Lo, M, N,
    whitespace as 1 to 6, the rest 0) as the ``regex`` module (our Python pre-tokenizer) sees them."""
    if "cased" not in _classes:
        import regex

        every = "".join(map(chr, range(0x110000)))
        out = np.zeros(0x110000, dtype=np.uint8)
        for cls, pattern in CASED_CLASSES:
            for run in regex.finditer(pattern + "+", every):
                if out[run.start() : run.end()].any():
                    raise RuntimeError(f"code point classes overlap at {pattern}")
                out[run.start() : run.end()] = cls
        _classes["cased"] = out
    return _classes["cased"]


def _bpe_numba(module: str = "bpe_numba") -> ModuleType:
    """:mod:`pipeline.tokenizer.bpe_numba` (or ``sp_numba``, SentencePiece BPE's kernel), imported at the first
    encoding that runs compiled."""
    # lazy: importing numba and loading (or compiling) the encoder costs seconds; small inputs never pay it
    from pipeline.tokenizer import bpe_numba, sp_numba

    return sp_numba if module == "sp_numba" else bpe_numba


def _sp_numba() -> ModuleType:
    """:mod:`pipeline.tokenizer.sp_numba`, imported at the first encoding that runs compiled."""
    return _bpe_numba("sp_numba")


class NumbaBPE:
    """Merge table as flat arrays plus the numba kernel call for a batch of texts.

    The kernels are imported, and the pair table built (itself a kernel), at the first encoding, not
    before: a tokenizer that only ever encodes small inputs on the Python path loads no kernel
    (pipeline/numba_backend.py)."""

    def __init__(
        self, table: MergeTable, byte_ids: Sequence[int], split: tuple[bool, int, bool, bool] | None = None
    ) -> None:
        self.split = split  # None: GPT-2's pre-tokenizer; else split_pretoken_end's (dollar, digits, marks), cased
        items = sorted(table.items(), key=lambda kv: kv[1][0])
        self._pairs = np.array([p for p, _ in items], dtype=np.int64).reshape(-1, 2)
        self._merged = np.array([v[1] for _, v in items], dtype=np.int32)
        self._ranks = np.array([v[0] for _, v in items], dtype=np.int32)
        if self._pairs.size and (self._pairs.max() >= 1 << 31 or self._merged.max() >= 1 << 31):
            raise ValueError("token ids must fit in int32")
        self._byte_ids = np.asarray(byte_ids, dtype=np.int32)

    @cached_property
    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(character classes, byte ids, open-addressing pair table): the encoding kernel's tables."""
        bits = max(4, (2 * len(self._ranks)).bit_length())
        pairs = self._pairs
        pair_table = _bpe_numba().build_pair_table(
            np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1]), self._ranks, self._merged, bits
        )
        if self.split is None:
            classes = char_classes()
        else:
            classes = cased_classes() if self.split[3] else split_classes()
        return classes, self._byte_ids, pair_table

    @cached_property
    def _kernel(self) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
        kernel: Callable[..., tuple[np.ndarray, np.ndarray]] = _bpe_numba().encode_utf8
        if self.split is not None:  # a named pattern of the cl100k family: no whole-token lookups (merges only)
            split_kernel, split = _bpe_numba().encode_utf8_split, self.split
            none = (np.zeros(0, np.uint64), np.zeros(1, np.int64), np.zeros(0, np.uint8), np.zeros(0, np.int32))

            def kernel(data, offsets, append_id, classes, byte_ids, pairs, *cache):  # type: ignore[no-untyped-def]
                return split_kernel(data, offsets, append_id, classes, byte_ids, pairs, split, none, *cache)

        return kernel

    def encode_utf8(
        self, data: np.ndarray, offsets: np.ndarray, cache: WordCache, append_id: int = -1
    ) -> tuple[np.ndarray, np.ndarray]:
        """int32 ids of the valid UTF-8 texts ``data[offsets[i]:offsets[i+1]]`` and the end of each
        text's ids; ``append_id >= 0`` is added after each text."""
        ids, ends = self._kernel(data, offsets, append_id, *self.tables, *cache.args())
        return ids, ends

    def encode(self, texts: Sequence[str], cache: WordCache, append_id: int = -1) -> tuple[np.ndarray, np.ndarray]:
        """int32 ids of ``texts`` (special-token strings as plain text) and the end of each text's ids."""
        if len(texts) == 1:
            data = utf8(texts[0])
            offsets = np.array([0, len(data)], dtype=np.int64)
        else:
            parts = [utf8(t) for t in texts]
            data = b"".join(parts)
            offsets = np.zeros(len(parts) + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)), out=offsets[1:])
        return self.encode_utf8(np.frombuffer(data, dtype=np.uint8), offsets, cache, append_id)


def scrub_surrogates(text: str) -> str:
    """``text`` with surrogate code points resolved as tiktoken does: a high + low pair becomes the
    character it encodes in UTF-16, a lone surrogate becomes U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def utf8(text: str) -> bytes:
    """UTF-8 bytes of ``text`` after :func:`scrub_surrogates` (only when it holds surrogates)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return scrub_surrogates(text).encode("utf-8")
