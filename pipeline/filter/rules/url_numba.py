"""numba kernels of the url filter (pipeline/filter/rules/url.py), over the UTF-8 bytes of a batch's metas:

- ``meta_urls``: where a meta is a flat JSON object (strings without escapes or control characters, numbers, true,
  false, null) holding the string token ``"url"`` once, as a key with a string value, the bytes of that value
  (what ``json.loads(meta)["url"]`` gives); -1 for any other meta (the Python step reads it);
- ``scan_urls``: per URL, its authority as tldextract's ``lenient_netloc`` cuts it before the host (a leading
  ``//``, or scheme characters, ``:`` and ``//``, removed; the text up to the first ``/``, ``?`` or ``#``), whether
  one of its words (maximal runs of ASCII letters and digits, as written) is in a word trie, and whether its
  lowercased letters and digits hold a word of an Aho-Corasick automaton;
- ``gather``: the bytes of many ranges as one string column's offsets and data;
- ``fnv1a``: a 64-bit hash of each range (the URL list's candidates, checked against the list's strings).

Bytes of non-ASCII characters are never letters, digits or delimiters, as in the Python rules."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _ws(data: np.ndarray, i: int, end: int) -> int:
    while i < end and (data[i] == 32 or data[i] == 9 or data[i] == 10 or data[i] == 13):
        i += 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _string(data: np.ndarray, i: int, end: int) -> int:
    """``i`` at an opening quote: the byte after the closing one, or -1 (an escape, a control character, no end)."""
    i += 1
    while i < end:
        b = data[i]
        if b == 34:
            return i + 1
        if b == 92 or b < 32:
            return -1
        i += 1
    return -1


@njit(cache=True, nogil=True, inline="always")
def _digits(data: np.ndarray, i: int, end: int) -> int:
    while i < end and 48 <= data[i] <= 57:
        i += 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _number(data: np.ndarray, i: int, end: int) -> int:
    """A JSON number at ``i``: the byte after it, or -1."""
    if i < end and data[i] == 45:
        i += 1
    if i >= end:
        return -1
    if data[i] == 48:
        i += 1
    elif 49 <= data[i] <= 57:
        i = _digits(data, i + 1, end)
    else:
        return -1
    if i < end and data[i] == 46:
        j = _digits(data, i + 1, end)
        if j == i + 1:
            return -1
        i = j
    if i < end and (data[i] == 101 or data[i] == 69):
        i += 1
        if i < end and (data[i] == 43 or data[i] == 45):
            i += 1
        j = _digits(data, i, end)
        if j == i:
            return -1
        i = j
    return i


@njit(cache=True, nogil=True, inline="always")
def _literal(data: np.ndarray, i: int, end: int, lits: np.ndarray, k: int) -> int:
    """Literal ``k`` of ``lits`` (rows of bytes, 0-padded) at ``i``: the byte after it, or -1."""
    n = 0
    while n < lits.shape[1] and lits[k, n] != 0:
        n += 1
    if end - i < n:
        return -1
    for m in range(n):
        if data[i + m] != lits[k, m]:
            return -1
    return i + n


@njit(cache=True, nogil=True, inline="always")
def _is_url(data: np.ndarray, s: int, e: int) -> bool:
    return e - s == 3 and data[s] == 117 and data[s + 1] == 114 and data[s + 2] == 108


@njit(cache=True, nogil=True)
def meta_urls(
    data: np.ndarray, offsets: np.ndarray, valid: np.ndarray, lits: np.ndarray, start: np.ndarray, stop: np.ndarray
) -> None:
    """``data[start[d]:stop[d]]``: the url of meta ``d`` when it is read here, else ``start[d] = -1``."""
    for d in range(len(offsets) - 1):
        start[d] = -1
        stop[d] = -1
        if not valid[d]:
            continue
        end = offsets[d + 1]
        i = _ws(data, offsets[d], end)
        if i >= end or data[i] != 123:
            continue
        i = _ws(data, i + 1, end)
        tokens = 0  # string tokens "url" (keys or values)
        us = -1
        ue = -1
        ok = True
        if i < end and data[i] == 125:
            i += 1
        else:
            while True:
                if i >= end or data[i] != 34:
                    ok = False
                    break
                j = _string(data, i, end)
                if j < 0:
                    ok = False
                    break
                key_url = _is_url(data, i + 1, j - 1)
                i = _ws(data, j, end)
                if i >= end or data[i] != 58:
                    ok = False
                    break
                i = _ws(data, i + 1, end)
                if i >= end:
                    ok = False
                    break
                b = data[i]
                if b == 34:
                    j = _string(data, i, end)
                    if j < 0:
                        ok = False
                        break
                    if _is_url(data, i + 1, j - 1):
                        tokens += 1
                    if key_url:
                        us = i + 1
                        ue = j - 1
                elif b == 116:
                    j = _literal(data, i, end, lits, 0)
                elif b == 102:
                    j = _literal(data, i, end, lits, 1)
                elif b == 110:
                    j = _literal(data, i, end, lits, 2)
                else:
                    j = _number(data, i, end)
                if j < 0:
                    ok = False
                    break
                if key_url:
                    tokens += 1
                i = _ws(data, j, end)
                if i < end and data[i] == 44:
                    i = _ws(data, i + 1, end)
                    continue
                if i < end and data[i] == 125:
                    i += 1
                    break
                ok = False
                break
        if not ok or _ws(data, i, end) != end:
            continue
        if tokens == 1 and us >= 0:
            start[d] = us
            stop[d] = ue


@njit(cache=True, nogil=True, inline="always")
def _scheme_char(b: int) -> bool:
    return (48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122) or b == 43 or b == 45 or b == 46


@njit(cache=True, nogil=True)
def scan_urls(
    data: np.ndarray,
    start: np.ndarray,
    stop: np.ndarray,
    word_next: np.ndarray,
    word_end: np.ndarray,
    sub_next: np.ndarray,
    sub_hit: np.ndarray,
    auth_start: np.ndarray,
    auth_stop: np.ndarray,
    words: np.ndarray,
) -> None:
    """Authority and word candidates of each URL ``data[start[d]:stop[d]]`` (see the module doc). The tables are
    over 36 classes, digits then lowercase letters; ``word_next`` and ``sub_next`` are -1 where no edge leads."""
    for d in range(len(start)):
        s = start[d]
        e = stop[d]
        a = s
        if e - s >= 2 and data[s] == 47 and data[s + 1] == 47:
            a = s + 2
        else:
            j = s
            while j < e and _scheme_char(data[j]):
                j += 1
            if j > s and j + 3 <= e and data[j] == 58 and data[j + 1] == 47 and data[j + 2] == 47:
                a = j + 3
        k = a
        while k < e and data[k] != 47 and data[k] != 63 and data[k] != 35:
            k += 1
        auth_start[d] = a
        auth_stop[d] = k
        hit = False
        w = 0  # word trie state within the current word; -1: no listed word starts this way
        inside = False
        state = 0  # automaton state over the lowercased letters and digits
        for i in range(s, e):
            b = data[i]
            if 48 <= b <= 57:
                c = b - 48
                low = c
            elif 97 <= b <= 122:
                c = b - 87
                low = c
            elif 65 <= b <= 90:
                c = -1  # the lists' words are lowercase: a word with a capital is none of them
                low = b - 55
            else:
                if inside and w >= 0 and word_end[w]:
                    hit = True
                    break
                inside = False
                w = 0
                continue
            inside = True
            if w >= 0:
                w = word_next[w, c] if c >= 0 else -1
            if len(sub_hit):
                state = sub_next[state, low]
                if sub_hit[state]:
                    hit = True
                    break
        if not hit and inside and w >= 0 and word_end[w]:
            hit = True
        words[d] = hit


@njit(cache=True, nogil=True)
def gather(data: np.ndarray, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranges ``data[start[d]:stop[d]]`` one after another: (int32 offsets, bytes)."""
    n = len(start)
    offsets = np.zeros(n + 1, dtype=np.int32)
    for d in range(n):
        offsets[d + 1] = offsets[d] + (stop[d] - start[d])
    out = np.empty(offsets[n], dtype=np.uint8)
    for d in range(n):
        out[offsets[d] : offsets[d + 1]] = data[start[d] : stop[d]]
    return offsets, out


@njit(cache=True, nogil=True)
def fnv1a(data: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """FNV-1a, 64 bits, of each range ``data[start[d]:stop[d]]``."""
    out = np.empty(len(start), dtype=np.uint64)
    prime = np.uint64(1099511628211)
    for d in range(len(start)):
        h = np.uint64(14695981039346656037)
        for i in range(start[d], stop[d]):
            h = (h ^ np.uint64(data[i])) * prime
        out[d] = h
    return out
