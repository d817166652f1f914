"""numba twin of :meth:`pipeline.fasttext.predict.FastTextPredictor.hidden`: fastText's hidden vectors of
many lines given as UTF-8 bytes end to end, the input rows of every word added in fastText's own order.

Per line, as fastText reads it: words are runs of bytes other than its whitespace (space, ``\\t \\n \\v \\f \\r
\\0``); a newline ends the line (or is a space, ``newline_is_space``); a word ``</s>`` ends it too; a word that
the dictionary lacks and that starts with ``__label__`` is a label, not input; the line's end adds ``</s>``. A
dictionary word adds its precomputed rows (its own, then its n-grams'); any other word its n-grams' rows,
computed here the way fastText's ``computeSubwords`` does: per code point of ``<word>``, the 1..``maxn`` code
point n-grams starting there (FNV-1a over their bytes, each byte sign-extended), those of ``minn`` code points
or more, not the lone ``<`` or ``>``, kept when the prune table gives their bucket a row. The rows are summed in
float32 one after another, as fastText's ``addRow`` does, so the vectors equal the numpy path's bit for bit.

Memory: a large model's input rows, and the dictionary of a large vocabulary, are mostly cache misses. A line's
words are split first, then looked up in :func:`word_table` (one slot holds a word's first 16 bytes, length, id and
FNV-1a hash: one read finds a word, the dictionary's bytes are read only for a word longer than that), each slot's
load asked for a few words ahead. The table is keyed by a hash of a word's first 16 bytes read as two 8-byte
integers (:func:`_key`), not by FNV-1a, whose one multiplication per byte, each waiting for the one before, cost
more than the split itself: a dictionary word's FNV-1a hash (word n-grams need it) is its slot's, and only a word
the dictionary lacks is hashed byte by byte. The line's rows are listed, then summed with each row's load asked
for a few rows ahead, eight rows per pass over the elements (each element still adds them one after another).

Character n-grams (lid.176's words outside the dictionary, most of its input): an n-gram's bucket is its hash
modulo ``bucket`` by two multiplications (:func:`_mod`; one code path whatever the bucket count, where a division
instruction per n-gram would cost a fifth of the kernel), and the n-gram writer is a function of its own (numba's
``inline="always"``, or two inlined copies for a constant bucket count, made the language ID kernel slower). The
split keeps each word's first 16 bytes beside its key, so the look-up reads them rather than the text again.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from pipeline.fasttext.memory import huge_empty

_U32 = np.uint32
_PRIME = np.uint32(16777619)
_BASIS = np.uint32(2166136261)
_LABEL = np.frombuffer(b"__label__", dtype=np.uint8)
_EOS = np.frombuffer(b"</s>", dtype=np.uint8)
_HIGH = np.uint64(0xFFFFFFFF00000000)
_NGRAM_PRIME = np.uint64(116049371)  # addWordNgrams' multiplier
_AHEAD = 8  # rows (and dictionary slots) ahead whose load is asked for while one is read
_LOW = np.uint64(0xFFFFFFFF)
_SLOT, _META, _FNV = 4, 2, 3  # a table slot's 8-byte words; where its id and length, its FNV-1a hash are
_SPACES = np.uint64(sum(1 << c for c in (32, 10, 13, 9, 11, 12, 0)))  # fastText's whitespace bytes as bits
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_BIG_ENDIAN = sys.byteorder == "big"  # _load8's integers are little-endian ones only there


@njit(cache=True, nogil=True, inline="always")
def _space(c: np.uint8) -> bool:
    return bool(c <= 32) and bool((_SPACES >> np.uint64(c)) & np.uint64(1))  # one bit test for most bytes


@njit(cache=True, nogil=True, inline="always")
def _mix(h: np.uint32, c: np.uint8) -> np.uint32:
    """One FNV-1a step with the byte sign-extended (``h ^ uint32_t(int8_t(c))``)."""
    b = _U32(c) | _U32(0xFFFFFF00) if c >= 128 else _U32(c)
    return _U32((h ^ b) * _PRIME)


@njit(cache=True, nogil=True, inline="always")
def _starts_with(data: np.ndarray, at: int, stop: int, prefix: np.ndarray) -> bool:
    if stop - at < prefix.shape[0]:
        return False
    for k in range(prefix.shape[0]):
        if data[at + k] != prefix[k]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _packed(data: np.ndarray, at: int, stop: int, k: int) -> np.uint64:
    """Bytes ``8 k`` to ``8 k + 7`` of ``data[at:stop]`` as one little-endian integer, zeros past ``stop``."""
    value = np.uint64(0)
    lo = at + 8 * k
    for j in range(lo, min(lo + 8, stop)):
        value |= np.uint64(data[j]) << np.uint64(8 * (j - lo))
    return value


def word_table(word_bytes: np.ndarray, word_at: np.ndarray) -> np.ndarray:
    """The dictionary as an open-addressing table from :func:`_key` (a power of two of slots, at least two per
    word): slot ``[first 8 bytes, next 8 bytes, id + 1 | length << 32, FNV-1a hash]`` (bytes zero-padded; 0: empty),
    so that one slot read tells a word of up to 16 bytes, its id and its fastText hash apart from every other. A
    large table is in memory advised huge pages (:mod:`pipeline.fasttext.memory`): its slots are read at random."""
    size = 16
    while size < 2 * (word_at.shape[0] - 1):
        size *= 2
    table = huge_empty((size, _SLOT), np.uint64)
    table[...] = 0
    _fill_word_table(word_bytes, word_at, table)
    return table


@njit(cache=True, nogil=True)
def _fill_word_table(word_bytes: np.ndarray, word_at: np.ndarray, table: np.ndarray) -> None:
    """:func:`word_table`'s slots written into ``table`` (zeros)."""
    n = word_at.shape[0] - 1
    mask = table.shape[0] - 1
    for wid in range(n):
        first, last = word_at[wid], word_at[wid + 1]
        h = _BASIS
        for k in range(first, last):
            h = _mix(h, word_bytes[k])
        low, high = _head(word_bytes, first, last)
        slot = int(_key(low, high, last - first)) & mask
        while table[slot, _META] != 0:
            slot = (slot + 1) & mask
        table[slot, 0], table[slot, 1] = low, high
        table[slot, _META] = np.uint64(wid + 1) | (np.uint64(last - first) << np.uint64(32))
        table[slot, _FNV] = np.uint64(h)


@intrinsic
def _load8(typingctx: Any, data: Any, at: Any) -> Any:
    """The 8 bytes ``data[at:at + 8]`` (uint8 array) as one little-endian integer, in one unaligned load; the
    caller makes sure they are inside the array."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        kind = signature.args[0]
        array = context.make_array(kind)(context, builder, args[0])
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = cgutils.get_item_pointer(context, builder, kind, array, [index], wraparound=False)
        word = builder.load(builder.bitcast(pointer, ir.IntType(64).as_pointer()), align=1)
        return word

    return types.uint64(data, at), codegen


@njit(cache=True, nogil=True, inline="always")
def _head(data: np.ndarray, at: int, stop: int) -> tuple[np.uint64, np.uint64]:
    """Bytes 0-7 and 8-15 of ``data[at:stop]``, each as a little-endian integer, zeros past ``stop``: two
    unaligned loads masked where 16 bytes from ``at`` are inside ``data``, else byte by byte."""
    length = stop - at
    if at + 16 > data.shape[0] or _BIG_ENDIAN:
        return _packed(data, at, stop, 0), _packed(data, at, stop, 1)
    low: np.uint64 = _load8(data, at)  # type: ignore[call-arg]
    high: np.uint64 = _load8(data, at + 8)
    if length < 8:
        return low & ((np.uint64(1) << np.uint64(8 * length)) - np.uint64(1)), np.uint64(0)
    if length < 16:
        return low, high & ((np.uint64(1) << np.uint64(8 * (length - 8))) - np.uint64(1))
    return low, high


@njit(cache=True, nogil=True, inline="always")
def _key(low: np.uint64, high: np.uint64, length: int) -> np.uint64:
    """A word's slot hash in :func:`word_table` from its first 16 bytes (:func:`_head`) and length: a few
    multiplications over whole 8-byte words rather than FNV-1a's one per byte (its ids are the dictionary's all
    the same: a slot holds the word's id and FNV-1a hash)."""
    x = (low ^ (np.uint64(length) * _K1)) * _K2
    x ^= x >> np.uint64(29)
    x = (x ^ high) * _K1
    x ^= x >> np.uint64(32)
    return x * _K2


@njit(cache=True, nogil=True, inline="always")
def _find(
    data: np.ndarray,
    at: int,
    stop: int,
    low: np.uint64,
    high: np.uint64,
    key: np.uint64,
    table: np.ndarray,
    word_bytes: np.ndarray,
    word_at: np.ndarray,
) -> int:
    """The slot of :func:`word_table` holding the word ``data[at:stop]`` (-1: not a dictionary word); ``low``,
    ``high`` its :func:`_head`, ``key`` the slot to probe from. Only a word longer than 16 bytes reads the
    dictionary's bytes."""
    mask = table.shape[0] - 1
    length = stop - at
    meta = np.uint64(length) << np.uint64(32)
    slot = int(key) & mask
    while table[slot, _META] != 0:
        if (table[slot, _META] & _HIGH) == meta and table[slot, 0] == low and table[slot, 1] == high:
            if length <= 16:
                return slot
            first = word_at[int(table[slot, _META] & _LOW) - 1]
            same = True
            for k in range(16, length):
                if word_bytes[first + k] != data[at + k]:
                    same = False
                    break
            if same:
                return slot
        slot = (slot + 1) & mask
    return -1


@njit(cache=True, nogil=True)
def _lookup(
    data: np.ndarray, at: int, stop: int, key: np.uint64, table: np.ndarray, word_bytes: np.ndarray, word_at: np.ndarray
) -> tuple[int, np.uint32]:
    """(the dictionary id of ``data[at:stop]``, -1 when not a dictionary word; its FNV-1a hash) probed from slot
    ``key`` of :func:`word_table`'s ``table``; a word not found is hashed here."""
    low, high = _head(data, at, stop)
    slot = _find(data, at, stop, low, high, key, table, word_bytes, word_at)
    if slot >= 0:
        return int(table[slot, _META] & _LOW) - 1, _U32(table[slot, _FNV])
    return -1, _fnv(data, at, stop)


@njit(cache=True, nogil=True, inline="always")
def _word_key(data: np.ndarray, at: int, stop: int) -> np.uint64:
    """:func:`_key` of the word ``data[at:stop]``."""
    low, high = _head(data, at, stop)
    return _key(low, high, stop - at)


@njit(cache=True, nogil=True, inline="always")
def _fnv(data: np.ndarray, at: int, stop: int) -> np.uint32:
    """fastText's FNV-1a hash of ``data[at:stop]``."""
    h = _BASIS
    for k in range(at, stop):
        h = _mix(h, data[k])
    return h


@njit(cache=True, nogil=True, inline="always")
def _bucket_row(b: int, kept_bits: np.ndarray, bucket_rows: np.ndarray, direct: int) -> int:
    """The input row of bucket ``b`` (-1: pruned away)."""
    if direct >= 0:
        return direct + b
    return bucket_rows[b] if (kept_bits[b >> 3] >> (b & 7)) & 1 else -1  # the bits: few cache misses


@intrinsic
def _mulhi(typingctx: Any, a: Any, b: Any) -> Any:
    """The high 64 bits of the 128-bit product of two uint64 (one multiplication)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return types.uint64(types.uint64, types.uint64), codegen


@njit(cache=True, nogil=True)
def magic(bucket: int) -> np.uint64:
    """:func:`_mod`'s multiplier for ``bucket`` (1 to 2**32 - 1): ``ceil(2**64 / bucket)`` modulo 2**64 (0 for 0:
    no bucket, no n-gram)."""
    if bucket <= 0:
        return np.uint64(0)
    return np.uint64(0xFFFFFFFFFFFFFFFF) // np.uint64(bucket) + np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _mod(h: np.uint32, bucket: np.uint64, m: np.uint64) -> int:
    """``h % bucket`` for a 32-bit ``h`` by two multiplications (Lemire, Kaser and Kurz's fastmod), ``m`` being
    :func:`magic` of ``bucket``: a division instruction per n-gram would cost a fifth of the kernel."""
    return int(_mulhi(m * np.uint64(h), bucket))  # type: ignore[call-arg]


@njit(cache=True, nogil=True)
def _ngrams_into(
    word: np.ndarray,
    size: int,
    minn: int,
    maxn: int,
    bucket: np.uint64,
    m: np.uint64,
    kept_bits: np.ndarray,
    bucket_rows: np.ndarray,
    direct: int,
    rows: np.ndarray,
    at: int,
) -> int:
    """Write the kept n-gram rows of ``word[:size]`` (``<`` + word + ``>``) to ``rows[at:]``; returns the next
    free place. ``m``: :func:`magic` of ``bucket``; ``direct`` >= 0: the model is not pruned, bucket ``b``'s row
    is ``direct + b``."""
    for i in range(size):
        if (word[i] & 0xC0) == 0x80:
            continue
        h = _BASIS
        j, n = i, 1
        while j < size and n <= maxn:
            h = _mix(h, word[j])
            j += 1
            while j < size and (word[j] & 0xC0) == 0x80:
                h = _mix(h, word[j])
                j += 1
            if n >= minn and not (n == 1 and (i == 0 or j == size)):
                row = _bucket_row(_mod(h, bucket, m), kept_bits, bucket_rows, direct)
                if row >= 0:
                    rows[at] = row
                    at += 1
            n += 1
    return at


@njit(cache=True, nogil=True, inline="always")
def _signed(h: np.uint32) -> np.uint64:
    """A word hash as fastText's ``addWordNgrams`` reads it: stored as int32, widened to uint64 (sign-extended)."""
    u = np.uint64(h)
    return u | _HIGH if h >= _U32(0x80000000) else u


@njit(cache=True, nogil=True)
def _add_word_ngrams(
    hashes: np.ndarray,
    count: int,
    n: int,
    bucket: int,
    kept_bits: np.ndarray,
    bucket_rows: np.ndarray,
    direct: int,
    rows: np.ndarray,
    at: int,
) -> int:
    """Write the kept rows of the word n-grams (2..``n`` words) of a line's word hashes ``hashes[:count]`` to
    ``rows[at:]``, as fastText's ``addWordNgrams`` orders them (by first word, then length); returns the next free
    place."""
    ubucket = np.uint64(bucket)
    for i in range(count):
        h = _signed(hashes[i])
        j = i + 1
        while j < count and j < i + n:
            h = h * _NGRAM_PRIME + _signed(hashes[j])
            row = _bucket_row(int(h % ubucket), kept_bits, bucket_rows, direct)
            if row >= 0:
                rows[at] = row
                at += 1
            j += 1
    return at


@intrinsic
def _prefetch(typingctx: Any, matrix: Any, row: Any) -> Any:
    """Ask the CPU to start loading the first cache line of ``matrix[row]`` (LLVM's prefetch: read, keep)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        kind = signature.args[0]
        array = context.make_array(kind)(context, builder, args[0])
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        zero = context.get_constant(types.intp, 0)
        pointer = cgutils.get_item_pointer(context, builder, kind, array, [index, zero], wraparound=False)
        byte_pointer, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]), "llvm.prefetch.p0i8"
        )
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(matrix, row), codegen


@njit(cache=True, nogil=True)
def _sum_rows(inp: np.ndarray, rows: np.ndarray, count: int, acc: np.ndarray) -> None:
    """``acc += inp[rows[i]]`` for i in order, in float32, each row's load asked for ``AHEAD`` rows or more
    before it is added (the rows of a large model are mostly cache misses, and they are known in advance). Eight
    rows are added to each element in one pass, one after another as fastText adds them (the same roundings), so
    that ``acc`` is read and written once per eight rows."""
    dim = inp.shape[1]
    i = 0
    while i + 8 <= count:
        for j in range(i + _AHEAD, min(i + _AHEAD + 8, count)):
            _prefetch(inp, rows[j])  # type: ignore[call-arg]
        a, b, c, d = rows[i], rows[i + 1], rows[i + 2], rows[i + 3]
        e, f, g, h = rows[i + 4], rows[i + 5], rows[i + 6], rows[i + 7]
        for k in range(dim):
            x = ((acc[k] + inp[a, k]) + inp[b, k]) + inp[c, k]
            x = (((x + inp[d, k]) + inp[e, k]) + inp[f, k]) + inp[g, k]
            acc[k] = x + inp[h, k]
        i += 8
    for j in range(i, count):
        row = rows[j]
        for k in range(dim):
            acc[k] += inp[row, k]


@njit(cache=True, nogil=True)
def hidden(
    data: np.ndarray,
    offsets: np.ndarray,
    newline_is_space: bool,
    table: np.ndarray,
    word_bytes: np.ndarray,
    word_at: np.ndarray,
    word_rows: np.ndarray,
    word_rows_at: np.ndarray,
    own_only: bool,
    eos: int,
    minn: int,
    maxn: int,
    bucket: int,
    kept_bits: np.ndarray,
    bucket_rows: np.ndarray,
    inp: np.ndarray,
    out: np.ndarray,
    counts: np.ndarray,
    word_ngrams: int,
    eos_hash: np.uint32,
    direct: int,
) -> None:
    """Hidden vectors of lines ``data[offsets[i]:offsets[i + 1]]`` into ``out`` (float32, (lines, dim)) and rows
    per line into ``counts``. ``table``: :func:`word_table` of the dictionary, whose words' bytes are
    ``word_bytes[word_at[id]:word_at[id + 1]]`` and rows ``word_rows[word_rows_at[id]:word_rows_at[id + 1]]``
    (``own_only``: each word's row is its id alone); ``eos``: the id of ``</s>`` (-1: none); an n-gram's bucket
    ``b`` has row ``bucket_rows[b]`` when bit ``b`` of ``kept_bits`` (little-endian bit order) is set, row ``direct
    + b`` when ``direct`` >= 0 (a model not pruned). A line's words are split first, then looked up (each slot's
    load asked for ahead), their rows listed, then summed."""
    dim = inp.shape[1]
    acc = np.zeros(dim, dtype=np.float32)
    longest = 0
    for i in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[i + 1] - offsets[i])
    word = np.empty(longest + 2, dtype=np.uint8)  # <word>, bytes
    # a line of b bytes has at most b // 2 + 2 words (each one row of its own and n - 1 word n-grams first) and
    # fewer than 2 b + 4 code points of <word> to start a character n-gram of each size at
    starts = np.empty(longest // 2 + 2, dtype=np.int64)  # the line's words: data[starts[w]:ends[w]], table key
    ends = np.empty(longest // 2 + 2, dtype=np.int64)
    keys = np.empty(longest // 2 + 2, dtype=np.uint64)
    lows = np.empty(longest // 2 + 2, dtype=np.uint64)
    highs = np.empty(longest // 2 + 2, dtype=np.uint64)
    hashes = np.empty(longest // 2 + 2 if word_ngrams > 1 else 0, dtype=np.uint32)  # the input words' hashes
    rows = np.empty((longest // 2 + 2) * max(word_ngrams, 1) + (2 * longest + 4) * max(maxn - minn + 1, 0), np.int32)
    mask = table.shape[0] - 1
    ubucket, m = np.uint64(bucket), magic(bucket)
    for line in range(offsets.shape[0] - 1):
        acc[:] = 0
        nwords = nrows = nhashes = 0
        at, stop = offsets[line], offsets[line + 1]
        ended = False
        while at < stop and not ended:  # the words up to the line's end (a newline, or the word </s>)
            c = data[at]
            if _space(c):
                if c == 10 and not newline_is_space:
                    break
                at += 1
                continue
            end = at + 1
            while end < stop and not _space(data[end]):
                end += 1
            low, high = _head(data, at, end)
            starts[nwords], ends[nwords], keys[nwords] = at, end, _key(low, high, end - at)
            lows[nwords], highs[nwords] = low, high
            nwords += 1
            ended = end - at == _EOS.shape[0] and _starts_with(data, at, end, _EOS)
            at = end
        for w in range(nwords):
            if w + _AHEAD < nwords:
                _prefetch(table, int(keys[w + _AHEAD]) & mask)  # type: ignore[call-arg]
            at, end = starts[w], ends[w]
            slot = _find(data, at, end, lows[w], highs[w], keys[w], table, word_bytes, word_at)
            wid = int(table[slot, _META] & _LOW) - 1 if slot >= 0 else -1
            is_label = wid < 0 and _starts_with(data, at, end, _LABEL)
            if word_ngrams > 1 and not is_label:  # every input word's hash, </s> and unknown words too
                hashes[nhashes] = _U32(table[slot, _FNV]) if slot >= 0 else _fnv(data, at, end)
                nhashes += 1
            if wid >= 0:
                nrows = _word_rows(wid, own_only, word_rows, word_rows_at, rows, nrows)
            elif maxn > 0 and not is_label and not (w == nwords - 1 and ended):  # not </s>: it has no n-grams
                word[0] = 60  # "<"
                for k in range(at, end):
                    word[k - at + 1] = data[k]
                word[end - at + 1] = 62  # ">"
                nrows = _ngrams_into(
                    word, end - at + 2, minn, maxn, ubucket, m, kept_bits, bucket_rows, direct, rows, nrows
                )
        if not ended and eos >= 0:  # the line's own end of sentence
            nrows = _word_rows(eos, own_only, word_rows, word_rows_at, rows, nrows)
        if not ended and word_ngrams > 1:
            hashes[nhashes] = eos_hash
            nhashes += 1
        if word_ngrams > 1:
            nrows = _add_word_ngrams(hashes, nhashes, word_ngrams, bucket, kept_bits, bucket_rows, direct, rows, nrows)
        _sum_rows(inp, rows, nrows, acc)
        counts[line] = nrows
        if nrows:
            scale = np.float32(1.0 / nrows)
            for k in range(dim):
                out[line, k] = acc[k] * scale


@njit(cache=True, nogil=True, inline="always")
def _word_rows(
    wid: int, own_only: bool, word_rows: np.ndarray, word_rows_at: np.ndarray, rows: np.ndarray, at: int
) -> int:
    """Write dictionary word ``wid``'s rows to ``rows[at:]``; returns the next free place."""
    if own_only:
        rows[at] = wid
        return at + 1
    for p in range(word_rows_at[wid], word_rows_at[wid + 1]):
        rows[at] = word_rows[p]
        at += 1
    return at


@njit(cache=True, nogil=True)
def drop_newlines(data: np.ndarray, offsets: np.ndarray, out: np.ndarray, moved: np.ndarray) -> int:
    """Copy the bytes of ``data`` but newlines to ``out`` and each offset (``offsets[0]`` 0), moved to match, to
    ``moved``; returns the bytes written, or -1 (nothing written) when ``data[:offsets[-1]]`` has no newline."""
    stop = offsets[-1]
    first = 0
    while first < stop and data[first] != 10:
        first += 1
    if first == stop:
        return -1
    size = 0
    line = 0
    for i in range(stop):
        while offsets[line] == i:  # empty texts share an offset
            moved[line] = size
            line += 1
        c = data[i]
        if c != 10:
            out[size] = c
            size += 1
    for k in range(line, offsets.shape[0]):
        moved[k] = size
    return size
