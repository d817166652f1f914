"""Our numba encoder for a SentencePiece BPE model with byte fallback (docs/tokenizer.md, Kinds, Fast path):
ids identical to ``sentencepiece.SentencePieceProcessor(model_proto=...).encode(text)``.

SentencePiece's BPE encoder normalizes the text (here: the identity, a ``▁`` before it, every space as ``▁``), splits
it into characters and repeatedly merges the adjacent pair whose concatenation is a piece of the highest score,
leftmost first, over the whole text; a final symbol that is no piece becomes its UTF-8 bytes' ``<0xXX>`` pieces. The
merge table holds every split of a piece into two pieces, ranked by the piece's score (equal scores one rank). Merges
never cross two kinds of place, so the kernel encodes the pieces between them on their own and caches them: around
a character that no piece of two or more characters holds (a newline, most CJK characters, any character outside
the vocabulary), and before a ``▁`` that follows another character when no piece holds ``▁`` after another
character (as a model trained with ``split_by_whitespace``).

Covered (:meth:`SentencePieceBPE.from_model`): model type BPE with byte fallback and all 256 byte pieces; normalizer
without a character map (identity), not removing extra whitespace, escaping whitespace, whitespace as a prefix; no
user-defined or unused piece; ``▁`` a piece; every character of a piece a piece itself. Anything else (a unigram
model, ``nmt_nfkc``, user-defined symbols) is encoded by the library.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from pipeline.tokenizer.encode import WordCache, _bpe_numba, _sp_numba

SPACE = "\u2581"  # SentencePiece's whitespace symbol
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6  # ModelProto.SentencePiece.Type
UNIGRAM, BPE = 1, 2  # TrainerSpec.ModelType
MAX_BIGRAM_CHARS = 2048  # up to this many characters in pieces of two or more, a table of their neighbours
HEAP_AFTER = 48  # pieces of more characters merge with a heap (else by scanning the pairs)


@dataclass
class ModelSpec:
    """What the fast path needs of a SentencePiece ``ModelProto``, with the proto's defaults."""

    pieces: list[tuple[str, float, int]] = field(default_factory=list)  # (piece, score, type) in id order
    model_type: int = UNIGRAM
    byte_fallback: bool = False
    whitespace_as_suffix: bool = False
    charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of one protobuf message: an int for varints, bytes otherwise."""
    out: list[tuple[int, int, Any]] = []
    at, size = 0, len(data)

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            if at >= size:
                raise ValueError("truncated varint")
            b = data[at]
            at += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7

    while at < size:
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            value: Any = varint()
        elif wire == 1:
            value, at = data[at : at + 8], at + 8
        elif wire == 2:
            n = varint()
            value, at = data[at : at + n], at + n
        elif wire == 5:
            value, at = data[at : at + 4], at + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if at > size:
            raise ValueError("truncated field")
        out.append((number, wire, value))
    return out


def read_model(data: bytes) -> ModelSpec:
    """The fields of a SentencePiece model file (a serialized ``ModelProto``) the fast path reads."""
    spec = ModelSpec()
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2:
            piece, score, kind = "", 0.0, NORMAL
            for n, w, v in _fields(value):
                if n == 1 and w == 2:
                    piece = v.decode("utf-8")
                elif n == 2 and w == 5:
                    score = struct.unpack("<f", v)[0]
                elif n == 3 and w == 0:
                    kind = v
            spec.pieces.append((piece, score, kind))
        elif number == 2 and wire == 2:
            for n, w, v in _fields(value):
                if n == 3 and w == 0:
                    spec.model_type = v
                elif n == 35 and w == 0:
                    spec.byte_fallback = bool(v)
                elif n == 24 and w == 0:
                    spec.whitespace_as_suffix = bool(v)
        elif number == 3 and wire == 2:
            for n, w, v in _fields(value):
                if n == 2 and w == 2:
                    spec.charsmap = bytes(v)
                elif n == 3 and w == 0:
                    spec.add_dummy_prefix = bool(v)
                elif n == 4 and w == 0:
                    spec.remove_extra_whitespaces = bool(v)
                elif n == 5 and w == 0:
                    spec.escape_whitespaces = bool(v)
    return spec


class SentencePieceBPE:
    """A SentencePiece BPE model's tables for the numba kernel; pickles as its pieces and merges."""

    def __init__(self, spec: ModelSpec) -> None:
        pieces = spec.pieces
        normal = {p: i for i, (p, _, t) in enumerate(pieces) if t == NORMAL}
        byte_ids = [-1] * 256
        for i, (p, _, t) in enumerate(pieces):
            if t == BYTE and len(p) == 6 and p.startswith("<0x") and p.endswith(">"):
                byte_ids[int(p[3:5], 16)] = i
        if min(byte_ids) < 0:
            raise ValueError("the model lacks a byte piece")
        if SPACE not in normal:
            raise ValueError(f"{SPACE!r} is not a piece")
        # merged piece -> rank: higher score first, equal scores one rank (SentencePiece orders them by place alone)
        scores = sorted({s for p, s, t in pieces if t == NORMAL and len(p) > 1}, reverse=True)
        rank_of = {s: r for r, s in enumerate(scores)}
        left, right, rank, merged = [], [], [], []
        joined: set[str] = set()
        bigrams: set[tuple[int, int]] = set()
        for piece, i in normal.items():
            if len(piece) < 2:
                continue
            joined.update(piece)
            bigrams.update((ord(x), ord(y)) for x, y in zip(piece, piece[1:], strict=False))
            for cut in range(1, len(piece)):
                a, b = normal.get(piece[:cut]), normal.get(piece[cut:])
                if a is not None and b is not None:
                    left.append(a)
                    right.append(b)
                    rank.append(rank_of[pieces[i][1]])
                    merged.append(i)
        if any(c not in normal for c in joined):
            raise ValueError("a piece holds a character that is no piece")
        self.byte_ids = np.array(byte_ids, dtype=np.int32)
        self.space_id = normal[SPACE]
        self.dummy_prefix = spec.add_dummy_prefix
        # no piece holds the whitespace symbol after another character: a merge never crosses that place
        self.space_cuts = not any(SPACE in p.lstrip(SPACE) for p in normal)
        # runs of ▁ merge last and never with text after two of them: "▁▁▁x" is "▁▁" + "▁x" or "▁▁▁" + "x"
        runs = [pieces[i][1] for p, i in normal.items() if len(p) > 1 and not p.strip(SPACE)]
        others = [pieces[i][1] for p, i in normal.items() if len(p) > 1 and p.strip(SPACE)]
        self.run_split = (
            self.space_cuts
            and not any(p.startswith(SPACE * 2) and p.strip(SPACE) for p in normal)
            and (not runs or not others or max(runs) < min(others))
        )
        singles = [(ord(p), i) for p, i in normal.items() if len(p) == 1]
        self._single_points = np.array([c for c, _ in singles], dtype=np.int64)
        self._single_ids = np.array([i for _, i in singles], dtype=np.int32)
        self._joined = np.array(sorted(map(ord, joined)), dtype=np.int64)
        self._bigrams = np.array(sorted(bigrams), dtype=np.int64).reshape(-1, 2)
        self._merges = (
            np.array(left, dtype=np.int64),
            np.array(right, dtype=np.int64),
            np.array(rank, dtype=np.int32),
            np.array(merged, dtype=np.int32),
        )

    @classmethod
    def from_model(cls, data: bytes) -> SentencePieceBPE | None:
        """The fast path for the model file ``data``, or None when the kernel does not reproduce it (module doc)."""
        try:
            spec = read_model(data)
        except (ValueError, UnicodeDecodeError, struct.error):
            return None
        if (
            spec.model_type != BPE
            or not spec.byte_fallback
            or spec.whitespace_as_suffix
            or spec.charsmap
            or spec.remove_extra_whitespaces
            or not spec.escape_whitespaces
            or any(t in (USER_DEFINED, UNUSED) for _, _, t in spec.pieces)
            or len(spec.pieces) >= 1 << 31
        ):
            return None
        try:
            return cls(spec)
        except ValueError:
            return None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("tables", None)
        return state

    @cached_property
    def tables(self) -> tuple[Any, ...]:
        """The kernel's tables, built at first use: piece id of each code point or -1; its number among the characters
        pieces of two or more characters hold, or -1; which of those may stand next to each other in a piece (empty
        beyond ``MAX_BIGRAM_CHARS`` of them); byte ids; pair table."""
        char_ids = np.full(0x110000, -1, dtype=np.int32)
        char_ids[self._single_points] = self._single_ids
        joined = np.full(0x110000, -1, dtype=np.int32)
        joined[self._joined] = np.arange(len(self._joined), dtype=np.int32)
        n = len(self._joined)
        bigrams = np.zeros(n * n if n <= MAX_BIGRAM_CHARS else 0, dtype=np.uint8)
        if bigrams.size:
            a = np.searchsorted(self._joined, self._bigrams[:, 0])
            b = np.searchsorted(self._joined, self._bigrams[:, 1])
            bigrams[a * n + b] = 1
        left, right, rank, merged = self._merges
        order = np.argsort(rank, kind="stable")
        bits = max(4, (2 * len(merged)).bit_length())
        pairs = _bpe_numba().build_pair_table(left[order], right[order], rank[order], merged[order], bits)
        return char_ids, joined, bigrams, self.byte_ids, pairs

    def encode_utf8(
        self, data: np.ndarray, offsets: np.ndarray, cache: WordCache, append_id: int = -1, heap_after: int = HEAP_AFTER
    ) -> tuple[np.ndarray, np.ndarray]:
        """int32 ids of the valid UTF-8 texts ``data[offsets[i]:offsets[i+1]]`` and the end of each text's ids
        (``append_id`` after each when >= 0)."""
        kernel = _sp_numba().encode_sentencepiece
        specs = (self.dummy_prefix, self.space_cuts, self.space_id)
        ids, ends = kernel(data, offsets, append_id, *specs, *self.tables, heap_after, self.run_split, *cache.args())
        return ids, ends
