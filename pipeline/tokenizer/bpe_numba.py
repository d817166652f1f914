"""numba kernels of byte-level BPE encoding: a merge table and a word cache in flat numpy arrays.

Imported lazily (see :mod:`pipeline.tokenizer.encode`). Texts arrive as their UTF-8 bytes and are
pre-tokenized here too (:mod:`pretokenize_numba`), in one call per text or batch of texts. Merging
follows tiktoken: repeatedly merge the adjacent pair of lowest rank, leftmost first; the
pure-Python :func:`~pipeline.tokenizer.encode.bpe_ids` gives the same ids.

Merge table: open addressing on ``(left << 32) | right`` (``EMPTY`` marks a free slot) -> rank,
merged id. Word cache: open addressing on a 64-bit hash of the word's bytes, each slot pointing at
the word's bytes and ids in two pools; the bytes are compared on a hit, so a hash collision can
never change the ids. When the cache holds ``max_entries`` (at most half the slots) or a pool is
full, it is cleared: its memory is fixed when it is created.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.tokenizer.pretokenize_numba import pretoken_end

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
_MUL = np.uint64(0x9E3779B97F4A7C15)
_NO_RANK = np.int32(0x7FFFFFFF)
# cache state slots
_ENTRIES, _BYTES, _IDS, _MAX = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def build_pair_table(left: np.ndarray, right: np.ndarray, rank: np.ndarray, merged: np.ndarray, bits: int):
    """Open-addressing table of the merges (the first of duplicate pairs wins)."""
    size = 1 << bits
    keys = np.full(size, EMPTY, dtype=np.uint64)
    ranks = np.empty(size, dtype=np.int32)
    ids = np.empty(size, dtype=np.int32)
    mask = np.uint64(size - 1)
    shift = np.uint64(64 - bits)
    for r in range(left.shape[0]):
        key = (np.uint64(left[r]) << np.uint64(32)) | np.uint64(right[r])
        h = (key * _MUL) >> shift
        while keys[h] != EMPTY and keys[h] != key:
            h = (h + np.uint64(1)) & mask
        if keys[h] == EMPTY:
            keys[h] = key
            ranks[h] = rank[r]
            ids[h] = merged[r]
    return keys, ranks, ids


@njit(cache=True, nogil=True, inline="always")
def _lookup(keys, ranks, ids, shift, mask, a, b):
    key = (np.uint64(a) << np.uint64(32)) | np.uint64(b)
    h = (key * _MUL) >> shift
    while True:
        k = keys[h]
        if k == key:
            return ranks[h], ids[h]
        if k == EMPTY:
            return _NO_RANK, np.int32(-1)
        h = (h + np.uint64(1)) & mask


@njit(cache=True, nogil=True)
def _merge_word(data, start, n, byte_ids, keys, ranks, ids, shift, mask, tok, rk, mg, out, pos):
    """BPE of ``data[start:start+n]`` into ``out[pos:]``; returns the new end position."""
    for i in range(n):
        tok[i] = byte_ids[data[start + i]]
    m = n
    for i in range(m - 1):
        rk[i], mg[i] = _lookup(keys, ranks, ids, shift, mask, tok[i], tok[i + 1])
    while m > 1:
        best = _NO_RANK
        at = -1
        for i in range(m - 1):
            if rk[i] < best:
                best = rk[i]
                at = i
        if at < 0:
            break
        tok[at] = mg[at]
        for i in range(at + 1, m - 1):
            tok[i] = tok[i + 1]
            rk[i] = rk[i + 1]
            mg[i] = mg[i + 1]
        m -= 1
        if at + 1 < m:
            rk[at], mg[at] = _lookup(keys, ranks, ids, shift, mask, tok[at], tok[at + 1])
        else:
            rk[at] = _NO_RANK
        if at > 0:
            rk[at - 1], mg[at - 1] = _lookup(keys, ranks, ids, shift, mask, tok[at - 1], tok[at])
    for i in range(m):
        out[pos + i] = tok[i]
    return pos + m


@njit(cache=True, nogil=True)
def encode_texts(data, doc_ends, classes, byte_ids, keys, ranks, ids,
                 c_hash, c_byte, c_blen, c_id, c_nid, pool_b, pool_i, state):
    """Token ids of consecutive texts, and the end of each text's ids.

    ``data`` is the texts' UTF-8 bytes, ``doc_ends`` the end of each text in it (pre-tokens never
    cross a text's end), ``classes`` the code-point classes of :mod:`pretokenize_numba`. Uses and
    fills the word cache (``c_*``, pools, ``state``; 0 slots = no cache).
    """
    out = np.empty(data.shape[0], dtype=np.int32)
    ends = np.empty(doc_ends.shape[0], dtype=np.int64)
    bits = 0
    while (1 << bits) < keys.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    mask = np.uint64(keys.shape[0] - 1)
    c_mask = np.uint64(c_hash.shape[0] - 1) if c_hash.shape[0] > 0 else np.uint64(0)
    scratch = 64
    tok = np.empty(scratch, dtype=np.int32)
    rk = np.empty(scratch, dtype=np.int32)
    mg = np.empty(scratch, dtype=np.int32)
    pos = 0
    p = 0
    for d in range(doc_ends.shape[0]):
        doc_end = doc_ends[d]
        while p < doc_end:
            start = p
            p = pretoken_end(data, start, doc_end, classes)
            if p - start > scratch:
                scratch = 2 * (p - start)
                tok = np.empty(scratch, dtype=np.int32)
                rk = np.empty(scratch, dtype=np.int32)
                mg = np.empty(scratch, dtype=np.int32)
            pos = _encode_word(data, start, p - start, byte_ids, keys, ranks, ids, shift, mask, tok, rk, mg,
                               out, pos, c_hash, c_byte, c_blen, c_id, c_nid, pool_b, pool_i, state, c_mask)
        ends[d] = pos
    return out[:pos], ends


@njit(cache=True, nogil=True)
def _encode_word(data, start, n, byte_ids, keys, ranks, ids, shift, mask, tok, rk, mg, out, pos,
                 c_hash, c_byte, c_blen, c_id, c_nid, pool_b, pool_i, state, c_mask):
    """Ids of the pre-token ``data[start:start+n]`` into ``out[pos:]`` (from the cache or merged);
    returns the new end. ``tok``, ``rk``, ``mg`` are scratch of at least ``n`` entries."""
    if n == 1:
        out[pos] = byte_ids[data[start]]
        return pos + 1
    n_slots = c_hash.shape[0]
    h = np.uint64(n)
    s = np.uint64(0)
    if n_slots > 0:
        for i in range(n):
            h = (h ^ np.uint64(data[start + i])) * _MUL
        h = h ^ (h >> np.uint64(29))
        if h == np.uint64(0):
            h = np.uint64(1)
        s = h & c_mask
        while c_hash[s] != np.uint64(0):
            if c_hash[s] == h and c_blen[s] == n:
                off = c_byte[s]
                same = True
                for i in range(n):
                    if pool_b[off + i] != data[start + i]:
                        same = False
                        break
                if same:
                    k = c_nid[s]
                    off = c_id[s]
                    for i in range(k):
                        out[pos + i] = pool_i[off + i]
                    return pos + k
            s = (s + np.uint64(1)) & c_mask
    end = _merge_word(data, start, n, byte_ids, keys, ranks, ids, shift, mask, tok, rk, mg, out, pos)
    k = end - pos
    if n_slots > 0 and n <= pool_b.shape[0] and k <= pool_i.shape[0]:
        if (state[_ENTRIES] >= state[_MAX] or state[_BYTES] + n > pool_b.shape[0]
                or state[_IDS] + k > pool_i.shape[0]):
            c_hash[:] = 0  # full: start again (fixed memory)
            state[_ENTRIES] = state[_BYTES] = state[_IDS] = 0
            s = h & c_mask
        c_hash[s] = h
        c_blen[s] = n
        c_byte[s] = state[_BYTES]
        c_nid[s] = k
        c_id[s] = state[_IDS]
        for i in range(n):
            pool_b[state[_BYTES] + i] = data[start + i]
        for i in range(k):
            pool_i[state[_IDS] + i] = out[pos + i]
        state[_BYTES] += n
        state[_IDS] += k
        state[_ENTRIES] += 1
    return end
