"""A fastText supervised model file (``.bin`` or quantized ``.ftz``) read with numpy, from fastText's documented
layout: magic and version, the args header, the dictionary (entries, then the prune index of a pruned one), the
input matrix (dense, or product-quantized with an optional norm quantizer), then the output matrix.

The input matrix is returned dequantized, row by row as fastText's ``addRow`` adds it (``norm * centroid`` in
float32), so summing its rows in fastText's order gives fastText's hidden vector bit for bit.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from pipeline.errors import UsageError
from pipeline.fasttext.memory import huge_copy

MAGIC = 793712314
VERSION = 12
KSUB = 256  # centroids per sub-quantizer
ARG_NAMES = (
    "dim",
    "ws",
    "epoch",
    "min_count",
    "neg",
    "word_ngrams",
    "loss",
    "model",
    "bucket",
    "minn",
    "maxn",
    "lr_update_rate",
)
LOSSES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
SUPERVISED = 3  # model_name::sup
ENTRY = struct.Struct("<qb")  # a dictionary entry after its word: count, type


@dataclass
class FastTextModel:
    """The parts of a supervised model that predict needs."""

    args: dict[str, int | float | str]
    words: list[str]  # the dictionary's entries of type word, by id
    labels: list[str]  # the label entries (with their ``__label__`` prefix), by label id
    label_counts: np.ndarray  # int64, per label (the hierarchical softmax tree is built from them)
    prune: dict[int, int] | None  # bucket hash -> input row offset after nwords; None when not pruned
    input: np.ndarray  # float32 (rows, dim), dequantized as addRow adds it
    output: np.ndarray  # float32 (labels or inner nodes, dim), dequantized as dotRow reads it
    output_norms: np.ndarray | None  # float32 per output row when the output is quantized with norms, else None


class _Reader:
    """Little-endian reads from a bytes buffer, with the field named when the file ends early."""

    def __init__(self, data: bytes | mmap.mmap, path: str) -> None:
        self.data, self.at, self.path = data, 0, path

    def array(self, dtype: str, count: int, what: str) -> np.ndarray:
        size = np.dtype(dtype).itemsize * count
        if count < 0 or self.at + size > len(self.data):
            raise UsageError(f"fastText model {self.path}: file ends inside {what}")
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.at)
        self.at += size
        return out

    def one(self, dtype: str, what: str) -> int | float:
        return self.array(dtype, 1, what)[0].item()

    def entries(self, count: int) -> list[tuple[str, int, int]]:
        """``count`` dictionary entries: (word, its count, its type: 0 word, 1 label), each a C string, an int64
        and an int8."""
        data, at, out = self.data, self.at, []
        find, unpack = data.find, ENTRY.unpack_from
        for _ in range(count):
            end = find(b"\0", at)
            if end < 0 or end + 1 + ENTRY.size > len(data):
                raise UsageError(f"fastText model {self.path}: file ends inside dictionary entries")
            out.append((data[at:end].decode("utf-8", "surrogateescape"), *unpack(data, end + 1)))
            at = end + 1 + ENTRY.size
        self.at = at
        return out


def _product_quantizer(r: _Reader, what: str) -> tuple[int, int, int, int, np.ndarray]:
    dim, nsubq, dsub, lastdsub = (int(x) for x in r.array("<i4", 4, what))
    return dim, nsubq, dsub, lastdsub, r.array("<f4", dim * KSUB, what)


def _decode(codes: np.ndarray, pq: tuple[int, int, int, int, np.ndarray]) -> np.ndarray:
    """Each row's centroids laid side by side (ProductQuantizer's get_centroids per sub-quantizer)."""
    dim, nsubq, dsub, lastdsub, centroids = pq
    rows = codes.reshape(-1, nsubq)
    out = np.empty((rows.shape[0], dim), dtype=np.float32)
    for m in range(nsubq):
        width = lastdsub if m == nsubq - 1 else dsub
        table = centroids[m * KSUB * dsub : m * KSUB * dsub + KSUB * width].reshape(KSUB, width)
        out[:, m * dsub : m * dsub + width] = table[rows[:, m]]
    return out


def _matrix(r: _Reader, quantized: bool, what: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(rows as centroids or dense values, the per-row norms when quantized with a norm quantizer)."""
    if not quantized:
        m, n = (int(x) for x in r.array("<i8", 2, what))
        return r.array("<f4", m * n, what).reshape(m, n), None
    qnorm = bool(r.one("u1", what))
    m, _n = (int(x) for x in r.array("<i8", 2, what))
    codesize = int(r.one("<i4", what))
    codes = r.array("u1", codesize, what)
    rows = _decode(codes, _product_quantizer(r, what))
    if rows.shape[0] != m:
        raise UsageError(f"fastText model {r.path}: {what} has {rows.shape[0]} coded rows, header says {m}")
    if not qnorm:
        return rows, None
    norm_codes = r.array("u1", m, what)
    norms = _product_quantizer(r, what + " norms")[4][norm_codes].astype(np.float32)
    return rows, norms


def load(path: str) -> FastTextModel:
    """Read the supervised fastText model at ``path``; a clear one-line error when it is not one."""
    try:
        with open(path, "rb") as handle:  # mapped, not read: the input matrix is copied once, to its own memory
            data: bytes | mmap.mmap = (
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if _file_size(handle) else b""
            )
    except OSError as exc:
        raise UsageError(f"fastText model {path}: cannot read it ({exc.strerror})") from exc
    r = _Reader(data, path)
    if len(data) < 8 or r.one("<i4", "magic") != MAGIC:
        raise UsageError(f"fastText model {path}: not a fastText model file (bad magic number)")
    version = r.one("<i4", "version")
    if version != VERSION:
        raise UsageError(f"fastText model {path}: file version {version}, only {VERSION} is read")
    args: dict[str, int | float | str] = dict(zip(ARG_NAMES, (int(x) for x in r.array("<i4", 12, "args")), strict=True))
    args["t"] = r.one("<f8", "args")
    if args["model"] != SUPERVISED:
        raise UsageError(f"fastText model {path}: not a supervised model (model {args['model']})")
    args["loss"] = LOSSES.get(int(args["loss"]), str(args["loss"]))
    size, nwords, nlabels = (int(x) for x in r.array("<i4", 3, "dictionary"))
    _ntokens, prune_size = (int(x) for x in r.array("<i8", 2, "dictionary"))
    words: list[str] = []
    labels: list[str] = []
    counts: list[int] = []
    for word, count, kind in r.entries(size):
        if kind == 0:
            words.append(word)
        else:
            labels.append(word)
            counts.append(count)
    if (len(words), len(labels)) != (nwords, nlabels):
        raise UsageError(f"fastText model {path}: dictionary counts do not match its header")
    prune = None
    if prune_size >= 0:
        pairs = r.array("<i4", 2 * prune_size, "prune index").reshape(-1, 2)
        prune = dict(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(), strict=True))
    rows, norms = _matrix(r, bool(r.one("u1", "input matrix")), "input matrix")
    if norms is not None:
        rows = rows * norms[:, None]  # addRow: x += norm * c, each product in float32
    args["qout"] = int(r.one("u1", "output matrix"))
    output, output_norms = _matrix(r, bool(args["qout"]), "output matrix")
    output = np.array(output, dtype=np.float32)  # copies: nothing keeps the file's mapping
    output_norms = None if output_norms is None else np.array(output_norms, dtype=np.float32)
    return FastTextModel(
        args, words, labels, np.array(counts, dtype=np.int64), prune, huge_copy(rows), output, output_norms
    )


def _file_size(handle: BinaryIO) -> int:
    """The size in bytes of an open file."""
    return os.fstat(handle.fileno()).st_size
