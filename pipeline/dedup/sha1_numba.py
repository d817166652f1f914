"""numba SHA-1 (FIPS 180-4) of many short byte slices, reduced to datasketch's ``sha1_hash32``.

``sha1_hash32(data)`` is the first 4 bytes of the SHA-1 digest read little-endian, i.e. the
byte-swapped first state word ``h0``. Hashing shingles here, straight from the batch's UTF-8 token
buffer, avoids building one ``bytes`` and one hashlib object per shingle.

Shingles are short, so most fit one 64-byte block (at most 55 bytes). Those are hashed ``LANES`` at a
time (multi-buffer SHA-1) in one flat uint32 scratch array whose row ``t`` holds word ``t`` of every lane:
each step is a loop over the lanes, which LLVM turns into SIMD instructions (the rows sit at constant
offsets of one array, so it needs no run-time alias checks). Longer messages, and the last few of a
buffer (the lanes read 56 bytes from a message's start), go through the scalar :func:`sha1_hash32`.
Values are checked against ``hashlib`` in the tests; ``bench/bench_vs_bigcode.py`` times the features step.
Small helpers are left to LLVM to inline (numba's own ``inline="always"`` on them doubled the first
compilation's time); it is kept where a constant argument (the round function) must reach the loop body.
A cold run compiles this module first (docs/dedup.md, Compiled kernels), so it keeps each helper to one
specialisation: rotations are passed as uint32 values rather than literals, and the lanes are hashed from a
single call site in :func:`sha1_windows`, so their code is compiled and inlined once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

LANES = 64  # messages hashed together (the fastest of 16, 32, 64, 128 measured)
_S = 80  # first state row of the lane scratch (after the 80 schedule rows)
_ONE_BLOCK = 55  # longest message whose padding (0x80 and the 8-byte length) fits the same 64-byte block
_U32 = np.uint32
_U64 = np.uint64
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_H = (_U32(0x67452301), _U32(0xEFCDAB89), _U32(0x98BADCFE), _U32(0x10325476), _U32(0xC3D2E1F0))
_K = (_U32(0x5A827999), _U32(0x6ED9EBA1), _U32(0x8F1BBCDC), _U32(0xCA62C1D6))
_R1, _R5, _R30 = _U32(1), _U32(5), _U32(30)  # rotations as uint32 values, not literals: one ``_rotl`` for all


@njit(cache=True, nogil=True)
def _rotl(x: np.uint32, r: np.uint32) -> np.uint32:
    """32-bit left rotation (numba widens to 64 bits: truncated back here)."""
    return _U32((x << r) | (x >> (_U32(32) - r)))


@njit(cache=True, nogil=True)
def _f(kind: int, b: np.uint32, c: np.uint32, d: np.uint32) -> np.uint32:
    """The round function of rounds 20*kind .. 20*kind+19 (Ch, Parity, Maj, Parity)."""
    if kind == 0:
        return _U32(d ^ (b & (c ^ d)))
    if kind == 2:
        return _U32((b & c) | (d & (b | c)))
    return _U32(b ^ c ^ d)


@njit(cache=True, nogil=True)
def _bswap(x: np.uint32) -> np.uint32:
    return _U32(
        ((x & _U32(0xFF)) << _U32(24))
        | ((x & _U32(0xFF00)) << _U32(8))
        | ((x >> _U32(8)) & _U32(0xFF00))
        | (x >> _U32(24))
    )


@njit(cache=True, nogil=True)
def _block_words(buf: np.ndarray, lo: int, n: int, base: int, total: int, w: np.ndarray) -> None:
    """Words 0..15 of the block at byte ``base`` of the padded message ``buf[lo:lo+n]`` (``total`` bytes):
    whole words read big-endian, the word where the message ends built byte by byte with the 0x80 byte,
    zeros after it, and the 64-bit bit length in the last block's words 14 and 15."""
    for t in range(16):
        r = n - (base + 4 * t)  # message bytes left at this word's start
        if r >= 4:
            i = _U64(lo + base + 4 * t)  # unsigned: no negative-index fix-up, so LLVM fuses the byte loads
            w[t] = (
                (_U32(buf[i]) << _U32(24))
                | (_U32(buf[i + _U64(1)]) << _U32(16))
                | (_U32(buf[i + _U64(2)]) << _U32(8))
                | _U32(buf[i + _U64(3)])
            )
        elif r >= 0:
            v = _U32(0)
            for k in range(r):
                v = _U32((v << _U32(8)) | _U32(buf[lo + n - r + k]))
            w[t] = _U32(((v << _U32(8)) | _U32(0x80)) << _U32(8 * (3 - r)))
        else:
            w[t] = 0
    if base + 64 == total:
        bits = _U64(n) * _U64(8)
        w[14] = _U32(bits >> _U64(32))
        w[15] = _U32(bits & _U64(0xFFFFFFFF))


@njit(cache=True, nogil=True, inline="always")
def _scalar_rounds(
    a: np.uint32, b: np.uint32, c: np.uint32, d: np.uint32, e: np.uint32, w: np.ndarray, t0: int, kind: int
) -> tuple[np.uint32, np.uint32, np.uint32, np.uint32, np.uint32]:
    """Rounds ``t0 .. t0+19`` (one round function) of one message."""
    k = _K[kind]
    for t in range(t0, t0 + 20):
        a, b, c, d, e = _U32(_rotl(a, _R5) + _f(kind, b, c, d) + e + k + w[t]), a, _rotl(b, _R30), c, d
    return a, b, c, d, e


@njit(cache=True, nogil=True)
def sha1_hash32(buf: np.ndarray, lo: int, hi: int, w: np.ndarray) -> np.uint32:
    """``sha1_hash32(bytes(buf[lo:hi]))``, any length; ``w`` is an 80-word uint32 scratch array."""
    n = hi - lo
    total = ((n + 8) // 64 + 1) * 64
    h0, h1, h2, h3, h4 = _H
    for base in range(0, total, 64):
        _block_words(buf, lo, n, base, total, w)
        for t in range(16, 80):
            w[t] = _rotl(_U32(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]), _R1)
        a, b, c, d, e = _scalar_rounds(h0, h1, h2, h3, h4, w, 0, 0)
        a, b, c, d, e = _scalar_rounds(a, b, c, d, e, w, 20, 1)
        a, b, c, d, e = _scalar_rounds(a, b, c, d, e, w, 40, 2)
        a, b, c, d, e = _scalar_rounds(a, b, c, d, e, w, 60, 3)
        h0, h1, h2, h3, h4 = _U32(h0 + a), _U32(h1 + b), _U32(h2 + c), _U32(h3 + d), _U32(h4 + e)
    return _bswap(h0)  # the digest starts with h0 big-endian; read little-endian it is h0 byte-swapped


@njit(cache=True, nogil=True, inline="always")
def _rounds(m: np.ndarray, t: int, kind: int) -> None:
    """Rounds ``t .. t+4`` on every lane. The loop over the lanes (which LLVM vectorises) reads each lane's state
    once and writes it once. In each round the new ``a`` takes the spent ``e``'s place and ``b`` is rotated where
    it is, so after five rounds the values are back in their roles (no moves)."""
    k = _K[kind]
    s0, w = _S * LANES, t * LANES
    for j in range(LANES):
        a, b, c, d, e = (
            m[s0 + j],
            m[s0 + LANES + j],
            m[s0 + 2 * LANES + j],
            m[s0 + 3 * LANES + j],
            m[s0 + 4 * LANES + j],
        )
        e = _U32(e + _rotl(a, _R5) + _f(kind, b, c, d) + k + m[w + j])
        b = _rotl(b, _R30)
        d = _U32(d + _rotl(e, _R5) + _f(kind, a, b, c) + k + m[w + LANES + j])
        a = _rotl(a, _R30)
        c = _U32(c + _rotl(d, _R5) + _f(kind, e, a, b) + k + m[w + 2 * LANES + j])
        e = _rotl(e, _R30)
        b = _U32(b + _rotl(c, _R5) + _f(kind, d, e, a) + k + m[w + 3 * LANES + j])
        d = _rotl(d, _R30)
        a = _U32(a + _rotl(b, _R5) + _f(kind, c, d, e) + k + m[w + 4 * LANES + j])
        c = _rotl(c, _R30)
        m[s0 + j], m[s0 + LANES + j], m[s0 + 2 * LANES + j], m[s0 + 3 * LANES + j], m[s0 + 4 * LANES + j] = (
            a,
            b,
            c,
            d,
            e,
        )


@njit(cache=True, nogil=True)
def _compress_lanes(m: np.ndarray) -> None:
    """SHA-1 of ``LANES`` one-block messages in one flat uint32 scratch ``m`` of ``(_S + 5) * LANES`` words:
    row ``t`` (``m[t*LANES : (t+1)*LANES]``) is schedule word ``t`` of every lane, rows 0..15 given (the
    message words); rows ``_S .. _S+4`` receive the state, row ``_S`` ends as the lanes' ``sha1_hash32``.
    One array with constant row offsets lets LLVM see that the rows never overlap (no run-time alias checks)."""
    for t in range(16, 80):
        for j in range(LANES):
            r = t * LANES + j
            m[r] = _rotl(_U32(m[r - 3 * LANES] ^ m[r - 8 * LANES] ^ m[r - 14 * LANES] ^ m[r - 16 * LANES]), _R1)
    for r in range(5):
        for j in range(LANES):
            m[(_S + r) * LANES + j] = _H[r]
    for t in range(0, 20, 5):  # one loop per round function, so that ``kind`` is a constant in each
        _rounds(m, t, 0)
    for t in range(20, 40, 5):
        _rounds(m, t, 1)
    for t in range(40, 60, 5):
        _rounds(m, t, 2)
    for t in range(60, 80, 5):
        _rounds(m, t, 3)
    for j in range(LANES):
        m[_S * LANES + j] = _bswap(_U32(m[_S * LANES + j] + _H[0]))


@njit(cache=True, nogil=True, inline="always")
def _lane_words(buf: np.ndarray, lo: int, n: int, m: np.ndarray, q: int) -> None:
    """The 16 big-endian words of the padded one-block message ``buf[lo:lo+n]`` (``n`` <= 55) into lane ``q``.

    Branch-free (message lengths vary, so loops over them would mispredict): words 0..13 are read whole
    from ``buf[lo : lo+56]`` (the caller makes sure those bytes exist) and the bytes past the message are
    masked off; the 0x80 byte is or-ed in, word 15 is the bit length (word 14, its high half, is 0)."""
    for t in range(7):  # two words per 8-byte read
        i = _U64(lo + 8 * t)  # unsigned indices: numba adds no negative-index fix-up, so LLVM fuses the loads
        v = _U64(0)
        for k in range(8):
            v = (v << _U64(8)) | _U64(buf[i + _U64(k)])
        r = n - 8 * t  # message bytes left at this read's start
        half = _U64(4 * min(max(r, 0), 8))  # shifting by 8 bytes per kept byte, in two halves (a shift < 64 each)
        mask = ~((_ALL >> half) >> half)  # the kept (message) bytes are the high ones
        end = ((_U64(0x80) << _U64(56)) >> half) >> half if r >= 0 else _U64(0)  # the 0x80 byte, if in here
        v = (v & mask) | end
        m[_U64(2 * t * LANES + q)] = v >> _U64(32)
        m[_U64((2 * t + 1) * LANES + q)] = v & _U64(0xFFFFFFFF)
    m[_U64(14 * LANES + q)] = 0
    m[_U64(15 * LANES + q)] = n * 8


@njit(cache=True, nogil=True)
def sha1_windows(
    buf: np.ndarray, lo: np.ndarray, hi: np.ndarray, unit_off: np.ndarray, ngram: int
) -> tuple[np.ndarray, np.ndarray]:
    """``sha1_hash32`` of every K-gram of each document's units (the bytes from the first unit's
    start to the last one's end; all units when a document has fewer than K), in document order.
    Repeated shingles of a document are hashed again (MinHash ignores repeats).
    Returns (uint32 hashes, int64 offsets per document)."""
    n_docs = unit_off.shape[0] - 1
    win_off = np.zeros(n_docs + 1, dtype=np.int64)
    for d in range(n_docs):
        n = unit_off[d + 1] - unit_off[d]
        win_off[d + 1] = win_off[d] + (n - ngram + 1 if n >= ngram else min(n, 1))
    out = np.empty(win_off[n_docs], dtype=np.uint32)
    m = np.zeros((_S + 5) * LANES, dtype=np.uint32)
    w1 = np.empty(80, dtype=np.uint32)
    queued = np.empty(LANES, dtype=np.int64)
    q = 0
    last = win_off[n_docs] - 1
    for d in range(n_docs):
        first = unit_off[d]
        width = min(unit_off[d + 1] - first, ngram)
        for k in range(win_off[d + 1] - win_off[d]):
            i, start, end = win_off[d] + k, lo[first + k], hi[first + k + width - 1]
            if end - start > _ONE_BLOCK or start + 56 > buf.shape[0]:  # 2+ blocks, or too near the end to read 56 bytes
                out[i] = sha1_hash32(buf, start, end, w1)
            else:
                _lane_words(buf, start, end - start, m, q)
                queued[q] = i
                q += 1
            if q == LANES or (i == last and q > 0):  # one call site: the lanes are compiled (and inlined) once
                _compress_lanes(m)
                for j in range(q):
                    out[queued[j]] = m[_S * LANES + j]
                q = 0
    return out, win_off


@njit(cache=True, nogil=True)
def sha1_slices(buf: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``sha1_hash32`` of every ``buf[lo[i]:hi[i]]``, as uint32 (each slice a one-unit window)."""
    return sha1_windows(buf, lo, hi, np.array([0, lo.shape[0]], dtype=np.int64), 1)[0]
