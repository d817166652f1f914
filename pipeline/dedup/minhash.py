"""Vectorised MinHash signatures, bit-identical to ``datasketch.MinHash`` 2.x (docs/dedup.md, Signatures).

Permutation parameters are drawn from ``numpy.random.RandomState(seed)`` in the order datasketch
draws them, and cached per (num_perm, seed, scheme):

* ``legacy``: per permutation, ``a`` in [1, p) then ``b`` in [0, p), p = 2^61 - 1, uint64; value
  ``((a*h + b) mod p) & 0xFFFFFFFF`` with numpy uint64 wrap-around in ``a*h + b``.
* ``affine32``: ``a = 2*randint(0, 2^31) + 1`` (odd) for all permutations, then ``b = randint(0, 2^32)``,
  uint32; value ``a * fmix32(h) + b mod 2^32``.

With numba, one compiled pass per batch keeps each document's ``P`` running minima in its output
row (``minhash_numba``). Without it, the batch's shingle hashes are permuted as matrices in row
chunks that bound memory and stay cache-sized, and min-reduced per document; same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from pipeline.dedup.hash_mixers import fmix32
from pipeline.dedup.numba_loader import compiled_kernels

from .hashes import shingle_hashes

SCHEMES = ("affine32", "legacy")
MERSENNE_61 = np.uint64((1 << 61) - 1)
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT61 = np.uint64(61)
DEFAULT_CHUNK_ELEMENTS = 1 << 16


def empty_value(scheme: str) -> int:
    """The per-permutation value of a document with no shingles (datasketch's untouched MinHash)."""
    return 0xFFFFFFFF


def output_dtype(scheme: str) -> type[np.unsignedinteger]:
    """Signature dtype: uint32 for ``affine32``, uint64 for ``legacy`` (as datasketch stores them)."""
    if scheme == "affine32":
        return np.uint32
    if scheme == "legacy":
        return np.uint64
    raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")


@lru_cache(maxsize=32)
def permutations(num_perm: int, seed: int = 1, scheme: str = "affine32") -> tuple[np.ndarray, np.ndarray]:
    """Read-only permutation parameters ``(a, b)``, each of length ``num_perm``, as datasketch draws them."""
    if num_perm < 1:
        raise ValueError(f"num_perm must be positive, got {num_perm}")
    rng = np.random.RandomState(seed)
    if scheme == "legacy":
        ab = np.empty((num_perm, 2), dtype=np.uint64)
        for k in range(num_perm):  # interleaved scalar draws: a_k, b_k, a_{k+1}, ...
            ab[k, 0] = rng.randint(1, MERSENNE_61, dtype=np.uint64)
            ab[k, 1] = rng.randint(0, MERSENNE_61, dtype=np.uint64)
        a, b = ab[:, 0].copy(), ab[:, 1].copy()
    elif scheme == "affine32":
        a = rng.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
        b = rng.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    else:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    a.setflags(write=False)
    b.setflags(write=False)
    return a, b


def _permute_legacy(h: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> None:
    """out = ((a*h + b) mod p) & 0xFFFFFFFF, with the Mersenne reduction done without division."""
    np.multiply(h[:, None], a, out=out)
    np.add(out, b, out=out)
    # x mod (2^61-1) == (x & p) + (x >> 61), minus p once if that is >= p (x < 2^64 so the sum < 2p).
    np.right_shift(out, _SHIFT61, out=tmp)
    np.bitwise_and(out, MERSENNE_61, out=out)
    np.add(out, tmp, out=out)
    np.subtract(out, MERSENNE_61, out=tmp)  # wraps to a huge value when out < p
    np.minimum(out, tmp, out=out)
    np.bitwise_and(out, _MASK32, out=out)


def _permute_affine32(h: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a*h + b mod 2^32 (h already pre-mixed with fmix32)."""
    np.multiply(h[:, None], a, out=out)
    np.add(out, b, out=out)


class _Permuter:
    """Applies the cached permutations to row blocks of hashes, reusing cache-sized buffers."""

    def __init__(self, num_perm: int, seed: int, scheme: str, rows: int) -> None:
        self.scheme, self.num_perm = scheme, num_perm
        self.a, self.b = permutations(num_perm, seed, scheme)
        dtype = output_dtype(scheme)
        self.buf = np.empty(rows * num_perm, dtype=dtype)
        self.tmp = np.empty_like(self.buf) if scheme == "legacy" else None

    def __call__(self, h: np.ndarray) -> np.ndarray:
        """Permuted values of the (pre-mixed) hashes ``h``: a view of shape ``(len(h), num_perm)``."""
        size = len(h) * self.num_perm
        out = self.buf[:size].reshape(len(h), self.num_perm)
        if self.tmp is not None:  # the legacy scheme's 64-bit products
            _permute_legacy(h, self.a, self.b, out, self.tmp[:size].reshape(out.shape))
        else:
            _permute_affine32(h, self.a, self.b, out)
        return out


def signatures_from_hashes(
    hashes: np.ndarray,
    offsets: np.ndarray,
    num_perm: int = 256,
    seed: int = 1,
    scheme: str = "affine32",
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
) -> np.ndarray:
    """MinHash signatures ``(n_docs, num_perm)`` from flat 32-bit shingle hashes and doc offsets.

    Document ``d`` owns ``hashes[offsets[d]:offsets[d+1]]``; a document with none gets all 0xFFFFFFFF.
    ``chunk_elements`` bounds the numpy path's temporary matrix (rows * num_perm) whatever the
    document sizes (the numba path needs no temporary).
    Short documents are grouped by shingle count so that one ``(docs, count, num_perm)`` block is
    permuted and min-reduced along its middle axis at once; long ones are reduced in row chunks.
    """
    dtype = output_dtype(scheme)
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    out = np.full((len(lengths), num_perm), empty_value(scheme), dtype=dtype)
    if offsets[-1] == 0:
        return out
    h = np.asarray(hashes, dtype=np.uint32)
    nb = compiled_kernels("signatures", 4 * h.size, scheme)
    if nb is not None:
        a, b = permutations(num_perm, seed, scheme)
        kernel = nb.minhash.affine32_signatures if scheme == "affine32" else nb.minhash.legacy_signatures
        kernel(np.ascontiguousarray(h), offsets, a, b, out)
        return out
    h = fmix32(h) if scheme == "affine32" else h.astype(np.uint64)
    rows = max(1, chunk_elements // num_perm)
    permute = _Permuter(num_perm, seed, scheme, rows)
    long_rows = max(1, rows // 4)

    for d in np.flatnonzero(lengths >= long_rows):
        acc = out[d]
        for lo in range(offsets[d], offsets[d + 1], rows):
            block = permute(h[lo : min(lo + rows, offsets[d + 1])])
            np.minimum(acc, block.min(axis=0), out=acc)

    short = np.flatnonzero((lengths > 0) & (lengths < long_rows))
    short = short[np.argsort(lengths[short], kind="stable")]
    cuts = np.flatnonzero(np.diff(lengths[short])) + 1
    for group in np.split(short, cuts) if len(short) else []:
        count = int(lengths[group[0]])
        per_block = max(1, rows // count)
        for i in range(0, len(group), per_block):
            docs = group[i : i + per_block]
            idx = (offsets[docs][:, None] + np.arange(count)).ravel()
            block = permute(h[idx]).reshape(len(docs), count, num_perm)
            out[docs] = block.min(axis=1)
    return out


def minhash_signatures(
    texts: Sequence[str],
    num_perm: int = 256,
    seed: int = 1,
    ngram: int = 5,
    scheme: str = "affine32",
    hash: str = "sha1",
    shingle: str = "word",
    max_shingles: int | None = None,
) -> np.ndarray:
    """MinHash signatures of a batch of texts, shape ``(len(texts), num_perm)``.

    uint32 for ``affine32``, uint64 for ``legacy``. With ``hash="sha1"`` the result equals
    ``datasketch.MinHash(num_perm, seed, scheme=scheme)`` updated with the same shingles.
    """
    output_dtype(scheme)  # validate before the (slow) hashing
    hashes, offsets = shingle_hashes(texts, ngram, shingle, max_shingles, hash)
    return signatures_from_hashes(hashes, offsets, num_perm, seed, scheme)
