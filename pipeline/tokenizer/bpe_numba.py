"""numba kernels of byte-level BPE encoding: a merge table and a word cache in flat numpy arrays.

Imported lazily (see :mod:`pipeline.tokenizer.encode`). Texts arrive as UTF-8 bytes with offsets
(e.g. an Arrow string column's buffers, or ``str.encode`` of a batch) and are pre-tokenized here
too (:mod:`pretokenize_numba`), in one call per batch. Merging follows tiktoken: repeatedly merge
the adjacent pair of lowest rank, leftmost first; the pure-Python
:func:`~pipeline.tokenizer.encode.bpe_ids` gives the same ids.

Both tables are laid out so that one lookup touches one cache line (the time of a warm encode is
mostly these lookups):

* merge table ``pairs[slot] = (left << 32 | right, rank << 32 | merged id)``, open addressing,
  ``EMPTY`` marks a free slot;
* word cache: an open-addressing ``index`` (0 = free, else the hash's high 32 bits and entry + 1)
  of dense ``entries[e, 0:8]`` (64 bytes, in insertion order, so the frequent early words share
  few pages): hash, the word's first 16 bytes packed little-endian in two words,
  ``length | id count << 32``, offset of the bytes beyond 16 in the byte pool, offset of the ids
  in the id pool (when more than 4), then up to 4 ids inline. The bytes are compared on a hit, so a
  hash collision can never change the ids. When the cache holds ``max_entries`` (at most half the
  index slots) or a pool is full, it is cleared: its memory is fixed when it is created.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.tokenizer.pretokenize_numba import _decode, cased_pretoken_end, pretoken_end, split_pretoken_end

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
_MUL = np.uint64(0x9E3779B97F4A7C15)
_MUL2 = np.uint64(0xC2B2AE3D27D4EB4F)
_LOW = np.uint64(0xFFFFFFFF)
_HIGH = np.uint64(0xFFFFFFFF00000000)
_NO_RANK = np.int64(0x7FFFFFFF)
INLINE_IDS = 4
# cache state slots
_ENTRIES, _BYTES, _IDS, _MAX = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def build_pair_table(left: np.ndarray, right: np.ndarray, rank: np.ndarray, merged: np.ndarray, bits: int):
    """Open-addressing table of the merges (the first of duplicate pairs wins)."""
    size = 1 << bits
    table = np.empty((size, 2), dtype=np.uint64)
    table[:, 0] = EMPTY
    mask = np.uint64(size - 1)
    shift = np.uint64(64 - bits)
    for r in range(left.shape[0]):
        key = (np.uint64(left[r]) << np.uint64(32)) | np.uint64(right[r])
        h = (key * _MUL) >> shift
        while table[h, 0] != EMPTY and table[h, 0] != key:
            h = (h + np.uint64(1)) & mask
        if table[h, 0] == EMPTY:
            table[h, 0] = key
            table[h, 1] = (np.uint64(rank[r]) << np.uint64(32)) | np.uint64(merged[r])
    return table


@njit(cache=True, nogil=True, inline="always")
def _lookup(pairs, shift, mask, a, b):
    """(rank, merged id) of the pair (a, b), or (_NO_RANK, -1)."""
    key = (np.uint64(a) << np.uint64(32)) | np.uint64(b)
    h = (key * _MUL) >> shift
    while True:
        k = pairs[h, 0]
        if k == key:
            v = pairs[h, 1]
            return np.int64(v >> np.uint64(32)), np.int32(v & _LOW)
        if k == EMPTY:
            return _NO_RANK, np.int32(-1)
        h = (h + np.uint64(1)) & mask


@njit(cache=True, nogil=True)
def _merge_scan(tok, m, pairs, shift, mask, rk, mg):
    """Merge the symbols ``tok[:m]`` in place, lowest rank and leftmost first (``rk`` and ``mg``: scratch of at
    least ``m``); returns the number of symbols left."""
    for i in range(m - 1):
        rk[i], mg[i] = _lookup(pairs, shift, mask, tok[i], tok[i + 1])
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
            rk[at], mg[at] = _lookup(pairs, shift, mask, tok[at], tok[at + 1])
        else:
            rk[at] = _NO_RANK
        if at > 0:
            rk[at - 1], mg[at - 1] = _lookup(pairs, shift, mask, tok[at - 1], tok[at])
    return m


@njit(cache=True, nogil=True)
def _merge_word(data, start, n, byte_ids, pairs, shift, mask, tok, rk, mg, out, pos):
    """BPE of ``data[start:start+n]`` into ``out[pos:]``; returns the new end position."""
    for i in range(n):
        tok[i] = byte_ids[data[start + i]]
    m = _merge_scan(tok, n, pairs, shift, mask, rk, mg)
    for i in range(m):
        out[pos + i] = tok[i]
    return pos + m


@njit(cache=True, nogil=True)
def _word_key(data, start, n):
    """(hash, first 8 bytes, bytes 8..15) of the word ``data[start:start+n]``; the hash is never 0."""
    k0 = np.uint64(0)
    k1 = np.uint64(0)
    head = n if n < 16 else 16
    for i in range(head):
        b = np.uint64(data[start + i])
        if i < 8:
            k0 |= b << np.uint64(8 * i)
        else:
            k1 |= b << np.uint64(8 * (i - 8))
    h = (k0 ^ (np.uint64(n) * _MUL2)) * _MUL
    h = ((h ^ (h >> np.uint64(31))) ^ k1) * _MUL2
    for i in range(16, n):
        h = (h ^ np.uint64(data[start + i])) * _MUL
    h ^= h >> np.uint64(29)
    if h == np.uint64(0):
        h = np.uint64(1)
    return h, k0, k1


@njit(cache=True, nogil=True)
def _cache_find(index, entries, pool_b, data, start, n, h, k0, k1, c_mask):
    """(entry of the word ``data[start:start+n]`` or -1, its index slot or the free slot where it
    belongs)."""
    s = h & c_mask
    tag = h & _HIGH
    while True:
        v = index[s]
        if v == 0:
            return -1, s
        if v & _HIGH == tag:
            e = np.int64(v & _LOW) - 1
            if (
                entries[e, 0] == h
                and entries[e, 1] == k0
                and entries[e, 2] == k1
                and np.int64(entries[e, 3] & _LOW) == n
            ):
                same = True
                off = np.int64(entries[e, 4]) - 16
                for i in range(16, n):
                    if pool_b[off + i] != data[start + i]:
                        same = False
                        break
                if same:
                    return e, s
        s = (s + np.uint64(1)) & c_mask


@njit(cache=True, nogil=True)
def _cache_put(index, entries, pool_b, pool_i, state, data, start, n, h, k0, k1, s, c_mask, out, pos, k):
    """Store the word's ids ``out[pos:pos+k]`` as a new entry at free index slot ``s`` (clearing a
    full cache first)."""
    extra_b = n - 16 if n > 16 else 0
    extra_i = k if k > INLINE_IDS else 0
    if extra_b > pool_b.shape[0] or extra_i > pool_i.shape[0]:
        return
    if (
        state[_ENTRIES] >= entries.shape[0]
        or state[_BYTES] + extra_b > pool_b.shape[0]
        or state[_IDS] + extra_i > pool_i.shape[0]
    ):
        index[:] = 0  # full: start again (fixed memory)
        state[_ENTRIES] = state[_BYTES] = state[_IDS] = 0
        s = h & c_mask
    e = state[_ENTRIES]
    entries[e, 0] = h
    entries[e, 1] = k0
    entries[e, 2] = k1
    entries[e, 3] = np.uint64(n) | (np.uint64(k) << np.uint64(32))
    entries[e, 4] = np.uint64(state[_BYTES])
    for i in range(extra_b):
        pool_b[state[_BYTES] + i] = data[start + 16 + i]
    state[_BYTES] += extra_b
    if extra_i:
        entries[e, 5] = np.uint64(state[_IDS])
        for i in range(k):
            pool_i[state[_IDS] + i] = out[pos + i]
        state[_IDS] += k
    else:
        entries[e, 6] = 0
        entries[e, 7] = 0
        for i in range(k):
            entries[e, 6 + (i >> 1)] |= np.uint64(np.uint32(out[pos + i])) << np.uint64(32 * (i & 1))
    index[s] = (h & _HIGH) | np.uint64(e + 1)
    state[_ENTRIES] = e + 1


@njit(cache=True, nogil=True, inline="always")
def _emit_cached(entries, pool_i, e, out, pos):
    """Write the ids of cache entry ``e`` at ``out[pos:]``; the position after them."""
    k = np.int64(entries[e, 3] >> np.uint64(32))
    if k <= INLINE_IDS:  # out has room for 4 past any position
        w = entries[e, 6]
        out[pos] = np.int32(w & _LOW)
        out[pos + 1] = np.int32(w >> np.uint64(32))
        w = entries[e, 7]
        out[pos + 2] = np.int32(w & _LOW)
        out[pos + 3] = np.int32(w >> np.uint64(32))
    else:
        off = np.int64(entries[e, 5])
        for i in range(k):
            out[pos + i] = pool_i[off + i]
    return pos + k


@njit(cache=True, nogil=True)
def encode_utf8(data, offsets, append_id, classes, byte_ids, pairs, index, entries, pool_b, pool_i, state):
    """Token ids of the texts ``data[offsets[d]:offsets[d + 1]]`` and the end of each text's ids.

    ``data`` is valid UTF-8, ``classes`` the code-point classes of :mod:`pretokenize_numba`.
    ``append_id >= 0`` is written after every text's ids (e.g. the end-of-document id). Uses and
    fills the word cache (``index``, ``entries``, pools, ``state``; 0 slots = no cache).
    """
    n_docs = offsets.shape[0] - 1
    extra = n_docs if append_id >= 0 else 0
    out = np.empty(offsets[n_docs] - offsets[0] + extra + INLINE_IDS, dtype=np.int32)
    ends = np.empty(n_docs, dtype=np.int64)
    bits = 0
    while (1 << bits) < pairs.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    mask = np.uint64(pairs.shape[0] - 1)
    use_cache = index.shape[0] > 0
    c_mask = np.uint64(index.shape[0] - 1) if use_cache else np.uint64(0)
    scratch = 64
    tok = np.empty(scratch, dtype=np.int32)
    rk = np.empty(scratch, dtype=np.int64)
    mg = np.empty(scratch, dtype=np.int32)
    pos = 0
    for d in range(n_docs):
        p = offsets[d]
        doc_end = offsets[d + 1]
        while p < doc_end:
            start = p
            p = pretoken_end(data, start, doc_end, classes)
            n = p - start
            if n == 1:
                out[pos] = byte_ids[data[start]]
                pos += 1
                continue
            if use_cache:
                h, k0, k1 = _word_key(data, start, n)
                e, s = _cache_find(index, entries, pool_b, data, start, n, h, k0, k1, c_mask)
                if e >= 0:
                    pos = _emit_cached(entries, pool_i, e, out, pos)
                    continue
            if n > scratch:
                scratch = 2 * n
                tok = np.empty(scratch, dtype=np.int32)
                rk = np.empty(scratch, dtype=np.int64)
                mg = np.empty(scratch, dtype=np.int32)
            end = _merge_word(data, start, n, byte_ids, pairs, shift, mask, tok, rk, mg, out, pos)
            if use_cache:
                _cache_put(
                    index, entries, pool_b, pool_i, state, data, start, n, h, k0, k1, s, c_mask, out, pos, end - pos
                )
            pos = end
        if append_id >= 0:
            out[pos] = append_id
            pos += 1
        ends[d] = pos
    return out[:pos], ends


@njit(cache=True, nogil=True)
def encode_utf8_split(
    data, offsets, append_id, classes, byte_ids, pairs, split, whole, index, entries, pool_b, pool_i, state
):
    """:func:`encode_utf8` for a tiktoken rank file under a pattern of :func:`split_pretoken_end`.

    ``split`` = (dollar, digits, marks) of that function and ``cased``: o200k's pattern instead
    (:func:`cased_pretoken_end`, whose classes ``classes`` then are); ``classes`` its classes. As tiktoken, a
    pre-token that is a token itself is that token: ``whole`` = (sorted hashes, byte offsets, bytes, ids) of the tokens
    the merges do not reach from their own bytes (:func:`unreached_tokens`), looked up before merging.
    """
    dollar, digits, marks, cased = split
    w_hash, w_off, w_bytes, w_ids = whole
    n_whole = w_hash.shape[0]
    n_docs = offsets.shape[0] - 1
    extra = n_docs if append_id >= 0 else 0
    out = np.empty(offsets[n_docs] - offsets[0] + extra + INLINE_IDS, dtype=np.int32)
    ends = np.empty(n_docs, dtype=np.int64)
    bits = 0
    while (1 << bits) < pairs.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    mask = np.uint64(pairs.shape[0] - 1)
    use_cache = index.shape[0] > 0
    c_mask = np.uint64(index.shape[0] - 1) if use_cache else np.uint64(0)
    scratch = 64
    tok = np.empty(scratch, dtype=np.int32)
    rk = np.empty(scratch, dtype=np.int64)
    mg = np.empty(scratch, dtype=np.int32)
    pos = 0
    for d in range(n_docs):
        p = offsets[d]
        doc_end = offsets[d + 1]
        while p < doc_end:
            start = p
            if cased:
                p = cased_pretoken_end(data, start, doc_end, classes)
            else:
                p = split_pretoken_end(data, start, doc_end, classes, dollar, digits, marks)
            n = p - start
            if n == 1:
                out[pos] = byte_ids[data[start]]
                pos += 1
                continue
            if use_cache:
                h, k0, k1 = _word_key(data, start, n)
                e, s = _cache_find(index, entries, pool_b, data, start, n, h, k0, k1, c_mask)
                if e >= 0:
                    pos = _emit_cached(entries, pool_i, e, out, pos)
                    continue
            if n_whole > 0:
                if not use_cache:
                    h, k0, k1 = _word_key(data, start, n)
                found = _whole_token(data, start, n, h, w_hash, w_off, w_bytes, w_ids)
                if found >= 0:
                    out[pos] = found
                    pos += 1
                    continue
            if n > scratch:
                scratch = 2 * n
                tok = np.empty(scratch, dtype=np.int32)
                rk = np.empty(scratch, dtype=np.int64)
                mg = np.empty(scratch, dtype=np.int32)
            end = _merge_word(data, start, n, byte_ids, pairs, shift, mask, tok, rk, mg, out, pos)
            if use_cache:
                _cache_put(
                    index, entries, pool_b, pool_i, state, data, start, n, h, k0, k1, s, c_mask, out, pos, end - pos
                )
            pos = end
        if append_id >= 0:
            out[pos] = append_id
            pos += 1
        ends[d] = pos
    return out[:pos], ends


@njit(cache=True, nogil=True)
def _whole_token(data, start, n, h, w_hash, w_off, w_bytes, w_ids):
    """Id of the listed token whose bytes are ``data[start:start+n]`` (hash ``h``), or -1."""
    i = np.searchsorted(w_hash, h)
    while i < w_hash.shape[0] and w_hash[i] == h:
        a, b = w_off[i], w_off[i + 1]
        if b - a == n:
            same = True
            for j in range(n):
                if w_bytes[a + j] != data[start + j]:
                    same = False
                    break
            if same:
                return w_ids[i]
        i += 1
    return -1


@njit(cache=True, nogil=True)
def token_hashes(data, offsets):
    """:func:`_word_key` hash of each token ``data[offsets[i]:offsets[i+1]]``."""
    out = np.empty(offsets.shape[0] - 1, dtype=np.uint64)
    for i in range(out.shape[0]):
        h, _, _ = _word_key(data, offsets[i], offsets[i + 1] - offsets[i])
        out[i] = h
    return out


@njit(cache=True, nogil=True)
def unreached_tokens(data, offsets, ids, byte_ids, pairs):
    """Indices of the tokens ``data[offsets[i]:offsets[i+1]]`` (id ``ids[i]``) that merging their own bytes does
    not turn into that one token."""
    bits = 0
    while (1 << bits) < pairs.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    mask = np.uint64(pairs.shape[0] - 1)
    longest = 1
    for i in range(ids.shape[0]):
        longest = max(longest, offsets[i + 1] - offsets[i])
    tok = np.empty(longest, dtype=np.int32)
    rk = np.empty(longest, dtype=np.int64)
    mg = np.empty(longest, dtype=np.int32)
    out = np.empty(longest, dtype=np.int32)
    found = []
    for i in range(ids.shape[0]):
        n = offsets[i + 1] - offsets[i]
        if n < 2:
            continue
        m = _merge_word(data, offsets[i], n, byte_ids, pairs, shift, mask, tok, rk, mg, out, 0)
        if m != 1 or out[0] != ids[i]:
            found.append(i)
    return np.array(found, dtype=np.int64)


@njit(cache=True, nogil=True)
def library_documents(data, offsets, points, added, added_offsets):
    """Per text ``data[offsets[d]:offsets[d+1]]``: the largest ``points`` value of its code points, or 2 when it
    holds one of the byte strings ``added[added_offsets[t]:added_offsets[t+1]]``."""
    n_docs = offsets.shape[0] - 1
    out = np.zeros(n_docs, dtype=np.uint8)
    first = np.zeros(256, dtype=np.bool_)
    n_added = added_offsets.shape[0] - 1
    for t in range(n_added):
        first[added[added_offsets[t]]] = True
    for d in range(n_docs):
        p = offsets[d]
        end = offsets[d + 1]
        while p < end and out[d] < 2:
            b = data[p]
            if first[b]:
                for t in range(n_added):
                    a = added_offsets[t]
                    n = added_offsets[t + 1] - a
                    if added[a] != b or n > end - p:
                        continue
                    same = True
                    for j in range(1, n):
                        if added[a + j] != data[p + j]:
                            same = False
                            break
                    if same:
                        out[d] = 2
                        break
            if b < 0x80:
                p += 1
                continue
            cp, k = _decode(data, p)
            if points[cp] > out[d]:
                out[d] = points[cp]
            p += k
    return out
