"""32-bit shingle hashes for a batch of documents, as one flat array plus per-document offsets.

Two hashes (docs/dedup.md, Signatures):

* ``"sha1"``: the first 4 bytes of SHA-1 of the shingle, little-endian (datasketch's ``sha1_hash32``).
* ``"xxhash"`` (the config name of the fast hash): each unit (token or char) is hashed from its code
  points, ``fmix64(H + n * SALT)`` with ``H`` the Horner polynomial ``H = H * MUL + (c + 1)`` mod 2^64
  over its ``n`` code points; the K unit hashes of a shingle are combined with a polynomial over
  uint64 and finalised with the MurmurHash3 64-bit mixer, keeping the high 32 bits.

With numba (:mod:`.numba_loader`, when ``pipeline.numba_backend.DEDUP`` says so) the whole batch is
tokenised and hashed in compiled kernels (``shingles_numba``, ``sha1_numba``, ``hashes_numba``); without
it, the same values come from Python tokenising, ``hashlib`` and vectorised numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import sha1
from itertools import chain

import numpy as np

from pipeline.dedup.hash_mixers import UNIT_LEN_SALT, UNIT_MUL, WINDOW_LEN_SALT, WINDOW_MUL, fmix64
from pipeline.dedup.numba_loader import compiled_kernels, ensure_compiled

from .shingles import check_shingle_params, tokens, unit_shingles, units

HASHES = ("sha1", "xxhash")

_U64 = np.uint64
_UNIT_MUL = int(UNIT_MUL)  # a Python int: its inverse mod 2^64 is taken with pow()
_POLY = WINDOW_MUL
_LEN_SALT = WINDOW_LEN_SALT
# Hash of the unit " " (char shingles join tokens with it); fmix64 is a bijection, so no other unit has it.
_SPACE_UNIT_H = fmix64(np.array([0x20 + 1], dtype=np.uint64) + UNIT_LEN_SALT)[0]


def _offsets(lengths: Sequence[int] | np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def text_size(texts: Sequence[str]) -> int:
    """The input size :meth:`pipeline.numba_backend.NumbaSwitch.use` weighs: characters of ``texts``."""
    return sum(map(len, texts))


def sha1_hash32_many(items: Sequence[bytes]) -> np.ndarray:
    """``sha1_hash32`` of every item, as a uint32 array (one C-level pass, no struct unpacking)."""
    if not items:
        return np.zeros(0, dtype=np.uint32)
    digests = b"".join([sha1(s).digest() for s in items])
    return np.frombuffer(digests, dtype="<u4").reshape(-1, 5)[:, 0].astype(np.uint32)


def _codepoints(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each text lower-cased by ``str.lower``, as one uint32 code-point array + int64 offsets."""
    lowered = [t.lower() for t in texts]
    lengths = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered))
    if not lowered:
        return np.zeros(0, dtype=np.uint32), _offsets(lengths)
    return np.concatenate([_narrow_codepoints(t) for t in lowered]).astype(np.uint32, copy=False), _offsets(lengths)


def _narrow_codepoints(text: str) -> np.ndarray:
    """The code points of ``text`` in the narrowest unsigned array that holds them: one byte each for ASCII,
    two without code points above U+FFFF (UTF-16 is then one unit per code point), else four. Widening these
    in one ``np.concatenate`` costs less than encoding every text as UTF-32 (measured: docs/benchmarks-history.md,
    Figures from the code)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    wide = text.encode("utf-16-le", "surrogatepass")
    if len(wide) == 2 * len(text):
        return np.frombuffer(wide, dtype=np.uint16)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _char_token_counts(is_space: np.ndarray, unit_off: np.ndarray) -> np.ndarray:
    """Word tokens per document from its char units: the single spaces that join its tokens, plus one if any."""
    before = _offsets(is_space.astype(np.int64))
    counts: np.ndarray = before[unit_off[1:]] - before[unit_off[:-1]] + (np.diff(unit_off) > 0)
    return counts


def _sha1_hashes_counts(
    texts: Sequence[str], ngram: int, shingle: str, max_shingles: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SHA-1 shingle hashes, offsets and word-token counts from one tokenising pass (:func:`sha1_shingle_hashes`)."""
    check_shingle_params(ngram, shingle, max_shingles)
    nb = compiled_kernels("shingles", text_size(texts), "sha1")
    if nb is None:
        toks = [tokens(t) for t in texts]
        us = toks if shingle == "word" else [list(" ".join(x)) for x in toks]
        lists = [unit_shingles(u, ngram, shingle, max_shingles) for u in us]
        hashes = sha1_hash32_many(list(chain.from_iterable(lists)))
        counts = np.fromiter(map(len, toks), dtype=np.int64, count=len(toks))
        return hashes, _offsets([len(x) for x in lists]), counts
    cps, doc_off = _codepoints(texts)
    buf, lo, hi, unit_off = nb.shingles.utf8_units(cps, doc_off, nb.shingles.word_table(), shingle == "char")
    counts = np.diff(unit_off) if shingle == "word" else _char_token_counts(buf[lo] == 0x20, unit_off)
    hashes, win_off = nb.sha1.sha1_windows(buf, lo, hi, unit_off, ngram)
    if max_shingles is not None and (np.diff(win_off) > max_shingles).any():  # the cap counts distinct shingles
        ensure_compiled("cap")
        keep = nb.shingles.first_distinct_windows(buf, lo, hi, unit_off, win_off, hashes, ngram, max_shingles)
        hashes, win_off = hashes[keep], _offsets(keep.astype(np.int64))[win_off]
    return hashes, win_off, counts


def sha1_shingle_hashes(
    texts: Sequence[str], ngram: int = 5, shingle: str = "word", max_shingles: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """SHA-1 hashes of each document's shingles: (uint32 hashes, int64 offsets of len n+1).

    The numpy path lists each distinct shingle once; the numba path may list a repeated shingle
    again (same hash, so the same signature) except in documents cut by ``max_shingles``.
    """
    hashes, offsets, _ = _sha1_hashes_counts(texts, ngram, shingle, max_shingles)
    return hashes, offsets


def _window_hashes(unit_h: np.ndarray, starts: np.ndarray, width: int | np.ndarray) -> np.ndarray:
    """Combine ``width`` consecutive unit hashes starting at each of ``starts`` into 32 bits."""
    if isinstance(width, int):
        acc = np.full(starts.shape, fmix64(np.array([width], dtype=np.uint64) * _LEN_SALT)[0])
        for j in range(width):
            acc = acc * _POLY + unit_h[starts + j]
    else:
        acc = fmix64(width.astype(np.uint64) * _LEN_SALT)
        for j in range(int(width.max(initial=0))):
            live = j < width
            stepped = acc * _POLY + unit_h[np.where(live, starts + j, 0)]
            acc = np.where(live, stepped, acc)
    high: np.ndarray = (fmix64(acc) >> _U64(32)).astype(np.uint32)
    return high


def _cap_distinct(h: np.ndarray, offsets: np.ndarray, cap: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Keep, per document, its first ``cap`` distinct hashes in order (only docs over the cap loop)."""
    lengths = np.diff(offsets)
    if cap is None or not (lengths > cap).any():
        return h, offsets
    keep = np.ones(len(h), dtype=bool)
    for d in np.flatnonzero(lengths > cap):
        lo, hi = offsets[d], offsets[d + 1]
        _, first = np.unique(h[lo:hi], return_index=True)
        first.sort()
        seg = np.zeros(hi - lo, dtype=bool)
        seg[first[:cap]] = True
        keep[lo:hi] = seg
    kept_before = _offsets(keep.astype(np.int64))
    return h[keep], kept_before[offsets]


def _horner_unit_hashes(texts: Sequence[str], shingle: str) -> tuple[np.ndarray, np.ndarray]:
    """numpy twin of ``shingles_numba.unit_hashes``: (uint64 unit hashes, int64 unit offsets per doc).

    ``H = sum c'_i * MUL^(n-1-i)`` (c' = code point + 1) for all units at once, mod 2^64:
    ``H = MUL^(e-1) * (S[e] - S[s])`` with ``S`` the prefix sums of ``c'_i * MUL^-i`` (MUL is odd,
    so it has an inverse mod 2^64).
    """
    per_doc = [units(t, shingle) for t in texts]
    flat = list(chain.from_iterable(per_doc))
    unit_off = _offsets(np.fromiter(map(len, per_doc), dtype=np.int64, count=len(per_doc)))
    cps = np.frombuffer("".join(flat).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64) + _U64(1)
    ends = _offsets(np.fromiter(map(len, flat), dtype=np.int64, count=len(flat)))
    if not len(flat):
        return np.zeros(0, dtype=np.uint64), unit_off
    n = len(cps)
    powers = np.multiply.accumulate(np.full(n, _UNIT_MUL, dtype=np.uint64))  # MUL^1 .. MUL^n
    inverse = np.multiply.accumulate(np.full(n, pow(_UNIT_MUL, -1, 1 << 64), dtype=np.uint64))
    prefix = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(cps * np.concatenate(([_U64(1)], inverse[:-1])), out=prefix[1:])
    last_power = np.concatenate(([_U64(1)], powers))[ends[1:] - 1]
    h = last_power * (prefix[ends[1:]] - prefix[ends[:-1]])
    return fmix64(h + np.diff(ends).astype(np.uint64) * UNIT_LEN_SALT), unit_off


def _xxhash_hashes_counts(
    texts: Sequence[str], ngram: int, shingle: str, max_shingles: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fast shingle hashes, offsets and word-token counts from one tokenising pass (:func:`xxhash_shingle_hashes`)."""
    check_shingle_params(ngram, shingle, max_shingles)
    nb = compiled_kernels("shingles", text_size(texts), "xxhash")
    if nb is not None:
        cps, doc_off = _codepoints(texts)
        unit_h, unit_off = nb.shingles.unit_hashes(cps, doc_off, nb.shingles.word_table(), shingle == "char")
        counts = np.diff(unit_off) if shingle == "word" else _char_token_counts(unit_h == _SPACE_UNIT_H, unit_off)
        hashes, win_off = nb.hashes.window_hashes(unit_h, unit_off, ngram)
        return (*_cap_distinct(hashes, win_off, max_shingles), counts)
    unit_h, unit_off = _horner_unit_hashes(texts, shingle)
    lengths = np.diff(unit_off)
    counts = lengths if shingle == "word" else _char_token_counts(unit_h == _SPACE_UNIT_H, unit_off)
    # One window per K-gram start for documents with >= K units, one short window otherwise.
    n_win = np.where(lengths >= ngram, lengths - ngram + 1, np.minimum(lengths, 1))
    win_off = _offsets(n_win)
    doc_of_win = np.repeat(np.arange(len(texts)), n_win)
    starts = np.arange(win_off[-1], dtype=np.int64) - win_off[doc_of_win] + unit_off[doc_of_win]
    widths = np.minimum(lengths, ngram)[doc_of_win]
    hashes = _window_hashes(unit_h, starts, widths if (widths < ngram).any() else ngram)
    return (*_cap_distinct(hashes, win_off, max_shingles), counts)


def xxhash_shingle_hashes(
    texts: Sequence[str], ngram: int = 5, shingle: str = "word", max_shingles: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Fast shingle hashes: (uint32 hashes, int64 offsets). Duplicate shingles within a document
    may repeat (MinHash is insensitive to them) unless ``max_shingles`` forces distinctness."""
    hashes, offsets, _ = _xxhash_hashes_counts(texts, ngram, shingle, max_shingles)
    return hashes, offsets


def shingle_hashes_and_counts(
    texts: Sequence[str],
    ngram: int = 5,
    shingle: str = "word",
    max_shingles: int | None = None,
    hash: str = "sha1",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`shingle_hashes` plus every text's word-token count (``token_counts``), from one tokenising pass:
    (uint32 hashes, int64 offsets of len n+1, int64 token counts of len n)."""
    if hash == "sha1":
        return _sha1_hashes_counts(texts, ngram, shingle, max_shingles)
    if hash == "xxhash":
        return _xxhash_hashes_counts(texts, ngram, shingle, max_shingles)
    raise ValueError(f"hash must be one of {HASHES}, got {hash!r}")


def shingle_hashes(
    texts: Sequence[str],
    ngram: int = 5,
    shingle: str = "word",
    max_shingles: int | None = None,
    hash: str = "sha1",
) -> tuple[np.ndarray, np.ndarray]:
    """Shingle hashes of a batch with the named hash: (uint32 hashes, int64 offsets of len n+1)."""
    hashes, offsets, _ = shingle_hashes_and_counts(texts, ngram, shingle, max_shingles, hash)
    return hashes, offsets
