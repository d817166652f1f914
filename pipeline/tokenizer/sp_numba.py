"""numba kernel of SentencePiece BPE encoding (:mod:`pipeline.tokenizer.sp_fast`): UTF-8 texts in, int32 ids out.

Imported lazily. The merge table, the word cache and the scan merge are :mod:`pipeline.tokenizer.bpe_numba`'s; a
piece between two places no merge crosses (see sp_fast) is merged by scanning its pairs, or with a heap when it is
long, lowest rank and leftmost first both ways, as SentencePiece's own agenda orders them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.tokenizer.bpe_numba import (
    INLINE_IDS,
    _cache_find,
    _cache_put,
    _emit_cached,
    _lookup,
    _merge_scan,
    _word_key,
)
from pipeline.tokenizer.pretokenize_numba import _decode

_NO_RANK = np.int64(0x7FFFFFFF)
_SPACE = 0x2581
_CACHE_BYTES = 64  # longer pieces are not cached
_MEMO = 64  # runs of ▁ shorter than this are remembered per call


@njit(cache=True, nogil=True, inline="always")
def _push(heap, size, key):
    i = size
    heap[i] = key
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= heap[i]:
            break
        heap[parent], heap[i] = heap[i], heap[parent]
        i = parent
    return size + 1


@njit(cache=True, nogil=True, inline="always")
def _pop(heap, size):
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        small = i
        a = 2 * i + 1
        b = a + 1
        if a < size and heap[a] < heap[small]:
            small = a
        if b < size and heap[b] < heap[small]:
            small = b
        if small == i:
            break
        heap[small], heap[i] = heap[i], heap[small]
        i = small
    return top, size


@njit(cache=True, nogil=True)
def _merge_heap(tok, m, pairs, shift, mask, nxt, prv, heap):
    """:func:`_merge_scan` with a linked list and a heap of ``rank << 32 | left place`` keys: a popped key whose pair
    still has that rank at that place is the lowest valid one. Returns the symbols left, compacted in ``tok``."""
    size = 0
    for i in range(m):
        nxt[i] = i + 1 if i + 1 < m else -1
        prv[i] = i - 1
    for i in range(m - 1):
        r, _ = _lookup(pairs, shift, mask, tok[i], tok[i + 1])
        if r != _NO_RANK:
            size = _push(heap, size, (r << 32) | i)
    while size > 0:
        key, size = _pop(heap, size)
        at = np.int64(key & 0xFFFFFFFF)
        r = key >> 32
        if tok[at] < 0:
            continue
        right = nxt[at]
        if right < 0:
            continue
        now, merged = _lookup(pairs, shift, mask, tok[at], tok[right])
        if now != r:
            continue
        tok[at] = merged
        tok[right] = -1
        after = nxt[right]
        nxt[at] = after
        if after >= 0:
            prv[after] = at
            r2, _ = _lookup(pairs, shift, mask, tok[at], tok[after])
            if r2 != _NO_RANK:
                size = _push(heap, size, (r2 << 32) | at)
        before = prv[at]
        if before >= 0:
            r2, _ = _lookup(pairs, shift, mask, tok[before], tok[at])
            if r2 != _NO_RANK:
                size = _push(heap, size, (r2 << 32) | before)
    k = 0
    i = 0
    while i >= 0:
        tok[k] = tok[i]
        k += 1
        i = nxt[i]
    return k


@njit(cache=True, nogil=True)
def _run_memo(r, space_id, memo, memo_len, pairs, shift, mask):
    """Remember the ids of a run of ``r`` ▁ (``r`` < ``_MEMO``) in ``memo[r]``."""
    tok = np.full(r, space_id, dtype=np.int32)
    k = _merge_scan(tok, r, pairs, shift, mask, np.empty(r, np.int64), np.empty(r, np.int32))
    memo_len[r] = k
    memo[r, :k] = tok[:k]


@njit(cache=True, nogil=True)
def _run_ids(r, space_id, out, pos, pairs, shift, mask, nxt, prv, heap):
    """Write the ids of a run of ``r`` ▁ at ``out[pos:]``; returns the position after them."""
    tok = np.full(r, space_id, dtype=np.int32)
    k = _merge_heap(tok, r, pairs, shift, mask, nxt, prv, heap)
    out[pos : pos + k] = tok[:k]
    return pos + k


@njit(cache=True, nogil=True)
def encode_sentencepiece(
    data,
    offsets,
    append_id,
    dummy_prefix,
    space_cuts,
    space_id,
    char_ids,
    joined,
    bigrams,
    byte_ids,
    pairs,
    heap_after,
    run_split,
    index,
    entries,
    pool_b,
    pool_i,
    state,
):
    """Ids of the texts ``data[offsets[d]:offsets[d + 1]]`` (valid UTF-8) as SentencePiece's BPE encodes them, and
    the end of each text's ids; ``append_id >= 0`` after each.

    A text is cut into pieces merged on their own: around every character no piece of two or more characters holds
    (``joined[c] < 0``; else ``joined[c]`` numbers the character), between two characters that no piece holds next
    to each other (``bigrams[a * J + b] == 0`` for J = ``sqrt(bigrams.size)``; an empty ``bigrams`` skips this), and,
    with ``space_cuts``, before a space or ``▁`` that follows another character. The pieces that are text bytes
    alone (not the ``▁`` put before a text) are cached by those bytes.
    """
    n_joined = 0
    while n_joined * n_joined < bigrams.shape[0]:
        n_joined += 1
    n_docs = offsets.shape[0] - 1
    extra = n_docs * (2 if append_id >= 0 else 1)  # the dummy prefix, the appended id
    out = np.empty(offsets[n_docs] - offsets[0] + extra + 2 * INLINE_IDS + 2, dtype=np.int32)
    memo = np.empty((_MEMO, _MEMO), dtype=np.int32)  # ids of a run of r ▁, for r < _MEMO
    memo_len = np.full(_MEMO, -1, dtype=np.int64)
    ends = np.empty(n_docs, dtype=np.int64)
    bits = 0
    while (1 << bits) < pairs.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    mask = np.uint64(pairs.shape[0] - 1)
    use_cache = index.shape[0] > 0
    c_mask = np.uint64(index.shape[0] - 1) if use_cache else np.uint64(0)
    scratch = 256
    tok = np.empty(scratch, dtype=np.int32)
    rk = np.empty(scratch, dtype=np.int64)
    mg = np.empty(scratch, dtype=np.int32)
    nxt = np.empty(scratch, dtype=np.int64)
    prv = np.empty(scratch, dtype=np.int64)
    heap = np.empty(3 * scratch, dtype=np.int64)
    pos = 0
    for d in range(n_docs):
        p = offsets[d]
        doc_end = offsets[d + 1]
        m = 0  # symbols of the open piece in tok
        seg = p  # where its text bytes start
        virtual = False  # it starts with the dummy prefix
        prev_space = False
        prev = -1  # joined[] of the last character of the open piece
        lead = 0  # how many ▁ it starts with
        last_space = p  # where the last of them is in the text
        if p < doc_end and dummy_prefix:
            tok[0] = space_id
            m = 1
            lead = 1
            virtual = True
            prev_space = True
            prev = joined[_SPACE]
        while p <= doc_end:
            cut = p == doc_end
            cp = 0
            k = 0
            j = -1
            space = False
            alone = False
            if not cut:
                cp, k = _decode(data, p)
                if cp == 0x20:
                    cp = _SPACE
                space = cp == _SPACE
                j = joined[cp]
                alone = j < 0
                if m > 0:
                    if alone:
                        cut = True
                    elif n_joined > 0:
                        cut = bigrams[prev * n_joined + j] == 0
                    else:
                        cut = space_cuts and space and not prev_space
            if cut and m > 0:  # the open piece ends before p: its ids at out[pos:]
                first = 0  # the piece merged on its own is tok[first:first + size], text bytes data[at:at + n]
                size = m
                at = seg
                cacheable = use_cache and not virtual
                run = 0  # ▁ before it, merged on their own
                if run_split and lead >= 2:
                    if m > lead:  # ▁-run then ▁ + text: "▁x" first, at room past the run's ids
                        first = lead - 1
                        size = m - first
                        at = last_space
                        cacheable = use_cache
                        run = lead - 1
                    else:
                        size = 0
                        run = m
                start = pos + run + 1 if run > 0 else pos
                end = start
                if size == 1:
                    out[start] = tok[first]
                    end = start + 1
                elif size > 1:
                    n = p - at
                    hit = False
                    if cacheable and n <= _CACHE_BYTES:
                        h, k0, k1 = _word_key(data, at, n)
                        e, s = _cache_find(index, entries, pool_b, data, at, n, h, k0, k1, c_mask)
                        if e >= 0:
                            end = _emit_cached(entries, pool_i, e, out, start)
                            hit = True
                    if not hit:
                        piece = tok[first:]
                        if size > heap_after:
                            left = _merge_heap(piece, size, pairs, shift, mask, nxt, prv, heap)
                        else:
                            left = _merge_scan(piece, size, pairs, shift, mask, rk, mg)
                        for i in range(left):
                            out[start + i] = piece[i]
                        end = start + left
                        if cacheable and n <= _CACHE_BYTES:
                            _cache_put(
                                index,
                                entries,
                                pool_b,
                                pool_i,
                                state,
                                data,
                                at,
                                n,
                                h,
                                k0,
                                k1,
                                s,
                                c_mask,
                                out,
                                start,
                                left,
                            )
                if run > 0:
                    if size > 0 and out[start] == space_id:  # the text's ▁ merged with nothing: it joins the run
                        run += 1
                        start += 1
                    if run < _MEMO and memo_len[run] < 0:
                        _run_memo(run, space_id, memo, memo_len, pairs, shift, mask)
                    if run < _MEMO:
                        for i in range(memo_len[run]):
                            out[pos + i] = memo[run, i]
                        pos += memo_len[run]
                    else:
                        pos = _run_ids(run, space_id, out, pos, pairs, shift, mask, nxt, prv, heap)
                    for i in range(end - start):
                        out[pos + i] = out[start + i]
                    pos += end - start
                else:
                    pos = end
                m = 0
                lead = 0
                virtual = False
            if p == doc_end:
                break
            if alone:  # a character no merge takes: its piece, or its bytes' pieces
                piece = char_ids[cp]
                if piece >= 0:
                    out[pos] = piece
                    pos += 1
                else:
                    for i in range(k):
                        out[pos + i] = byte_ids[data[p + i]]
                    pos += k
                p += k
                seg = p
                prev_space = False
                continue
            if m == 0:
                seg = p
            if space and m == lead:
                lead += 1
                last_space = p
            if m == scratch:
                scratch *= 2
                grown = np.empty(scratch, dtype=np.int32)
                grown[:m] = tok[:m]
                tok = grown
                rk = np.empty(scratch, dtype=np.int64)
                mg = np.empty(scratch, dtype=np.int32)
                nxt = np.empty(scratch, dtype=np.int64)
                prv = np.empty(scratch, dtype=np.int64)
                heap = np.empty(3 * scratch, dtype=np.int64)
            tok[m] = char_ids[cp]
            m += 1
            prev_space = space
            prev = j
            p += k
        if append_id >= 0:
            out[pos] = append_id
            pos += 1
        ends[d] = pos
    return out[:pos], ends
