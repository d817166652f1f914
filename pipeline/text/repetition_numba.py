"""numba twins of the Gopher repetition counts (datatrove 0.10.1's ``find_duplicates``, ``find_top_duplicate`` and
``find_all_duplicate``): repeated paragraphs and lines of a text, and the word n-grams of
:class:`pipeline.text.repetition.WordGrams`.

A document's words arrive as the code points of ``"\\n".join(words)`` (no word holds a newline or a space, else the
caller falls back). Each distinct word gets a number; a space-joined n-gram is keyed by a polynomial hash (modulo
2**64) of its words' numbers, a concatenated one by a hash of its letters (different words can join into the same
letters), both taken from prefix hashes in O(1). An open-addressing table groups the n-grams by key and compares
any two with equal keys (word numbers, then letters), so every count is exact whatever the hash does; a collision
only costs time. Paragraphs and lines are hashed whole and compared the same way.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_U64 = np.uint64
_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd
_MIX = np.uint64(0xFF51AFD7ED558CCD)  # a table slot is the top bits of key * _MIX
_NEWLINE = 10
_SPACE = 32


@njit(cache=True, nogil=True)
def powers(size: int) -> np.ndarray:
    """``_BASE ** i`` modulo 2**64 for ``i < size``."""
    out = np.empty(size, dtype=np.uint64)
    p = _U64(1)
    for i in range(size):
        out[i] = p
        p = p * _BASE
    return out


@njit(cache=True, nogil=True)
def prepare(
    joined: np.ndarray, n_words: int
) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`top_chars` and :func:`duplicated_chars` share, from the code points of ``"\\n".join(words)``:
    (whether no word holds a newline or a space, where each word starts in ``joined`` (and one past the end), a
    number per distinct word (in order of first occurrence), prefix hashes of those numbers and of ``joined``
    without its newlines, table slots, table keys, group counts, group representatives). Without a newline or
    space in a word, a space-joined n-gram equals another exactly when their words are the same, and a
    concatenated one when their runs of ``joined`` less the newlines are equal."""
    size = joined.shape[0]
    starts = np.empty(n_words + 1, dtype=np.int64)
    concat = np.empty(size + 1, dtype=np.uint64)
    table = 16
    while table < 2 * n_words:
        table *= 2
    slots = np.full(table, -1, dtype=np.int64)
    keys = np.empty(table, dtype=np.uint64)
    counts = np.empty(max(n_words, 1), dtype=np.int64)
    reps = np.empty(max(n_words, 1), dtype=np.int64)
    ids = np.zeros(max(n_words, 1), dtype=np.int64)
    bits = 4
    while (1 << bits) < table:
        bits += 1
    shift = _U64(64 - bits)
    mask = table - 1
    hc, hw = _U64(0), _U64(0)
    concat[0], starts[0] = hc, 0
    w, distinct = 0, 0
    ok = True
    for i in range(size + 1):
        c = joined[i] if i < size else _NEWLINE  # a newline after the last word ends it
        if c == _NEWLINE:
            if w < n_words:  # word w is joined[starts[w]:i]: its number
                a = starts[w]
                s = np.int64((hw * _MIX) >> shift)
                while True:
                    r = slots[s]
                    if r < 0:
                        slots[s], keys[s], reps[distinct] = w, hw, w
                        ids[w] = distinct
                        distinct += 1
                        break
                    if keys[s] == hw and _same(joined, starts[r], starts[r + 1] - 1, a, i):
                        ids[w] = ids[r]
                        break
                    s = (s + 1) & mask
                starts[w + 1] = i + 1
            w += 1
            hw = _U64(0)
        else:
            ok &= c != _SPACE
            hw = hw * _BASE + _U64(c) + _U64(1)
            hc = hc * _BASE + _U64(c) + _U64(1)
        if i < size:
            concat[i + 1] = hc
    words = np.empty(n_words + 1, dtype=np.uint64)
    h = _U64(0)
    words[0] = h
    for k in range(n_words):
        h = h * _BASE + _U64(ids[k]) + _U64(1)
        words[k + 1] = h
    return ok and w == n_words, starts, ids, words, concat, slots, keys, counts, reps


@njit(cache=True, nogil=True, inline="always")
def _run_hash(prefix: np.ndarray, powers: np.ndarray, a: int, b: int) -> np.uint64:
    return prefix[b] - prefix[a] * powers[b - a]


@njit(cache=True, nogil=True, inline="always")
def _same(values: np.ndarray, a: int, b: int, c: int, d: int) -> bool:
    """Whether ``values[a:b]`` equals ``values[c:d]``."""
    if b - a != d - c:
        return False
    for k in range(b - a):
        if values[a + k] != values[c + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _clear(slots: np.ndarray, m: int) -> tuple[int, int]:
    """Empties the table for ``m`` runs: (its mask, the right shift that turns a mixed key into a slot)."""
    size, bits = 16, 4
    while size < 2 * m:
        size *= 2
        bits += 1
    slots[:size] = -1
    return size - 1, 64 - bits


@njit(cache=True, nogil=True, inline="always")
def _same_letters(joined: np.ndarray, a: int, b: int, c: int, d: int) -> bool:
    """Whether ``joined[a:b]`` and ``joined[c:d]``, each less its newlines, are equal (their letters count equal)."""
    i, j = a, c
    while True:
        while i < b and joined[i] == _NEWLINE:
            i += 1
        while j < d and joined[j] == _NEWLINE:
            j += 1
        if i == b or j == d:
            return i == b and j == d
        if joined[i] != joined[j]:
            return False
        i += 1
        j += 1


@njit(cache=True, nogil=True, inline="always")
def _same_words(ids: np.ndarray, p: int, q: int, n: int) -> bool:
    for k in range(n):
        if ids[p + k] != ids[q + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def top_chars(
    starts: np.ndarray,
    ids: np.ndarray,
    prefix: np.ndarray,
    powers: np.ndarray,
    n: int,
    slots: np.ndarray,
    keys: np.ndarray,
    counts: np.ndarray,
    reps: np.ndarray,
) -> int:
    """Characters of the most frequent space-joined ``n``-gram times its count, the first to occur among equals
    (-1: fewer than ``n`` words); ``prefix``: :func:`prepare`'s hashes of the word numbers."""
    m = starts.shape[0] - n  # windows: n_words - n + 1
    if m <= 0:
        return -1
    mask, shift = _clear(slots, m)
    groups = 0
    for p in range(m):
        h = _run_hash(prefix, powers, p, p + n)
        s = np.int64((h * _MIX) >> _U64(shift))
        while True:
            g = slots[s]
            if g < 0:
                slots[s] = groups
                keys[s] = h
                reps[groups] = p
                counts[groups] = 1
                groups += 1
                break
            if keys[s] == h and _same_words(ids, reps[g], p, n):
                counts[g] += 1
                break
            s = (s + 1) & mask
    best, most = 0, 0
    for g in range(groups):  # groups are numbered in order of first occurrence: the first of equals wins
        if counts[g] > most:
            best, most = g, counts[g]
    q = reps[best]
    return int(starts[q + n] - 1 - starts[q]) * most


@njit(cache=True, nogil=True)
def duplicated_chars(
    joined: np.ndarray,
    starts: np.ndarray,
    ids: np.ndarray,
    prefix: np.ndarray,
    powers: np.ndarray,
    n: int,
    slots: np.ndarray,
    keys: np.ndarray,
) -> int:
    """Characters of concatenated ``n``-grams repeating one seen before, scanning left to right, jumping ``n``
    words past a repeat and one word past any other (what the scan jumps over is never seen); ``prefix``:
    :func:`prepare`'s hashes of ``joined`` less its newlines. Two n-grams of the same words are equal; others
    are compared letter by letter (different words can join into the same letters)."""
    m = starts.shape[0] - n
    if m <= 0:
        return 0
    mask, shift = _clear(slots, m)
    total = 0
    p = 0
    while p < m:
        a, b = starts[p], starts[p + n] - 1
        letters = b - a - (n - 1)
        h = prefix[b] - prefix[a] * powers[letters]
        s = np.int64((h * _MIX) >> _U64(shift))
        found = False
        while True:
            q = slots[s]
            if q < 0:
                break
            if keys[s] == h:
                c, d = starts[q], starts[q + n] - 1
                if d - c == b - a and (_same_words(ids, q, p, n) or _same_letters(joined, c, d, a, b)):
                    found = True
                    break
            s = (s + 1) & mask
        if found:
            total += letters
            p += n
        else:
            slots[s] = p
            keys[s] = h
            p += 1
    return total


@njit(cache=True, nogil=True, inline="always")
def _is_space(c: int) -> bool:
    """``str.isspace`` of one code point (what ``str.strip()`` removes)."""
    if c <= 0x20:
        return c == 0x20 or 0x09 <= c <= 0x0D or 0x1C <= c <= 0x1F
    if c < 0x85:
        return False
    return (
        c == 0x85
        or c == 0xA0
        or c == 0x1680
        or 0x2000 <= c <= 0x200A
        or c == 0x2028
        or c == 0x2029
        or c == 0x202F
        or c == 0x205F
        or c == 0x3000
    )


@njit(cache=True, nogil=True)
def space_table(size: int) -> np.ndarray:
    """:func:`_is_space` of the code points below ``size`` (for tests)."""
    out = np.empty(size, dtype=np.bool_)
    for c in range(size):
        out[c] = _is_space(c)
    return out


@njit(cache=True, nogil=True)
def _piece_duplicates(text: np.ndarray, first: int, stop: int, min_run: int) -> tuple[int, int, int]:
    """(pieces, pieces equal to an earlier one, their code points) of ``text[first:stop]`` cut at every run of at
    least ``min_run`` newlines, as ``re.split(r"\\n{min_run,}", ...)`` cuts it (a run at either end leaves an
    empty piece there)."""
    newlines = 0
    for i in range(first, stop):
        if text[i] == _NEWLINE:
            newlines += 1
    begin = np.empty(newlines + 1, dtype=np.int64)
    end = np.empty(newlines + 1, dtype=np.int64)
    pieces, start, i = 0, first, first
    while i < stop:
        if text[i] != _NEWLINE:
            i += 1
            continue
        j = i
        while j < stop and text[j] == _NEWLINE:
            j += 1
        if j - i >= min_run:
            begin[pieces], end[pieces] = start, i
            pieces += 1
            start = j
        i = j
    begin[pieces], end[pieces] = start, stop
    pieces += 1
    size, bits = 16, 4
    while size < 2 * pieces:
        size *= 2
        bits += 1
    slots = np.full(size, -1, dtype=np.int64)
    keys = np.empty(size, dtype=np.uint64)
    repeats, chars = 0, 0
    for k in range(pieces):
        a, b = begin[k], end[k]
        h = _U64(b - a)
        for i in range(a, b):
            h = h * _BASE + _U64(text[i]) + _U64(1)
        s = np.int64((h * _MIX) >> _U64(64 - bits))
        while True:
            r = slots[s]
            if r < 0:
                slots[s], keys[s] = k, h
                break
            if keys[s] == h and _same(text, begin[r], end[r], a, b):
                repeats += 1
                chars += b - a
                break
            s = (s + 1) & (size - 1)
    return pieces, repeats, chars


@njit(cache=True, nogil=True)
def paragraph_and_line_duplicates(text: np.ndarray) -> tuple[int, int, int, int, int, int]:
    """(paragraphs, repeated paragraphs, their characters, lines, repeated lines, their characters) of a text's
    code points: paragraphs as ``re.split(r"\\n{2,}", text.strip())`` cuts them, lines as ``re.split(r"\\n+",
    text)`` does; a piece is repeated when it equals an earlier one."""
    first, stop = 0, text.shape[0]
    while first < stop and _is_space(text[first]):
        first += 1
    while stop > first and _is_space(text[stop - 1]):
        stop -= 1
    paragraphs, para_repeats, para_chars = _piece_duplicates(text, first, stop, 2)
    lines, line_repeats, line_chars = _piece_duplicates(text, 0, text.shape[0], 1)
    return paragraphs, para_repeats, para_chars, lines, line_repeats, line_chars
