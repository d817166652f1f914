"""numba GPT-2 pre-tokenizer over UTF-8 bytes: the exact match sequence of ``PRETOKEN_RE.findall``.

The pattern ``'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+`` only
tests single code points against three classes, so a table of the class of every code point (built
from the ``regex`` module itself, see :func:`pipeline.tokenizer.encode.char_classes`) and the
alternatives' order reproduce it without backtracking:

* ``'`` followed by ``s d m t`` / ``ll ve re`` -> that contraction;
* a letter / number / other -> the longest run of its class; a space followed by one of them -> the
  space plus that run;
* otherwise whitespace: the longest whitespace run if it reaches the end of the text; else the run
  minus its last character (which then starts the next pre-token), or the single character if the
  run has length one.
"""

from __future__ import annotations

from numba import njit

OTHER, LETTER, NUMBER, SPACE = 0, 1, 2, 3


@njit(cache=True, nogil=True, inline="always")
def _decode(data, p):
    """(code point, byte length) of the valid UTF-8 character at ``data[p]``."""
    b = data[p]
    if b < 0x80:
        return b, 1
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (data[p + 1] & 0x3F), 2
    if b < 0xF0:
        return ((b & 0x0F) << 12) | ((data[p + 1] & 0x3F) << 6) | (data[p + 2] & 0x3F), 3
    return (((b & 0x07) << 18) | ((data[p + 1] & 0x3F) << 12) | ((data[p + 2] & 0x3F) << 6) | (data[p + 3] & 0x3F)), 4


@njit(cache=True, nogil=True, inline="always")
def _run_end(data, q, end, classes, cls):
    while q < end:
        cp, n = _decode(data, q)
        if classes[cp] != cls:
            break
        q += n
    return q


@njit(cache=True, nogil=True)
def pretoken_end(data, p, end, classes):
    """End (exclusive) of the pre-token starting at byte ``p`` of the text ``data[:end]``."""
    cp, n = _decode(data, p)
    if cp == 0x27 and p + 1 < end:  # ' : contractions, case-sensitive
        b1 = data[p + 1]
        if b1 == 0x73 or b1 == 0x64 or b1 == 0x6D or b1 == 0x74:  # s d m t
            return p + 2
        if p + 2 < end:
            b2 = data[p + 2]
            if (b1 == 0x6C and b2 == 0x6C) or (b1 == 0x76 and b2 == 0x65) or (b1 == 0x72 and b2 == 0x65):
                return p + 3  # ll ve re
    cls = classes[cp]
    if cp == 0x20 and p + 1 < end:
        cp2, n2 = _decode(data, p + 1)
        cls2 = classes[cp2]
        if cls2 != SPACE:
            return _run_end(data, p + 1 + n2, end, classes, cls2)
    if cls != SPACE:
        return _run_end(data, p + n, end, classes, cls)
    q = p + n
    last = p  # start of the run's last character
    while q < end:
        cp, n = _decode(data, q)
        if classes[cp] != SPACE:
            break
        last = q
        q += n
    if q == end or last == p:
        return q
    return last


# classes of :func:`split_pretoken_end` (one per code point, as the pattern's own regex engine sees it)
S_OTHER, S_LETTER, S_NUMBER, S_SPACE, S_MARK = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True, inline="always")
def _is_letter(cls, marks):
    return cls == S_LETTER or (marks and cls == S_MARK)


@njit(cache=True, nogil=True, inline="always")
def _is_punct(cls, marks):
    """``[^\\s\\p{L}\\p{N}]`` (and not ``\\p{M}`` with ``marks``)."""
    return cls == S_OTHER or (not marks and cls == S_MARK)


@njit(cache=True, nogil=True, inline="always")
def _folds_to(b, lower):
    """Whether the ASCII byte ``b`` is ``lower`` or its capital (case-insensitive contraction letters)."""
    return b == lower or b == lower - 32


@njit(cache=True, nogil=True)
def _contraction_end(data, p, end):
    """End of ``(?i:'s|'t|'re|'ve|'m|'ll|'d)`` at ``p`` (the apostrophe), or -1; ``s`` also folds from U+017F."""
    if p + 1 >= end:
        return -1
    b1 = data[p + 1]
    if _folds_to(b1, 0x73) or _folds_to(b1, 0x74) or _folds_to(b1, 0x6D) or _folds_to(b1, 0x64):  # s t m d
        return p + 2
    if b1 == 0xC5 and p + 2 < end and data[p + 2] == 0xBF:  # U+017F LATIN SMALL LETTER LONG S folds to s
        return p + 3
    if p + 2 < end:
        b2 = data[p + 2]
        if (
            (_folds_to(b1, 0x72) and _folds_to(b2, 0x65))  # re
            or (_folds_to(b1, 0x76) and _folds_to(b2, 0x65))  # ve
            or (_folds_to(b1, 0x6C) and _folds_to(b2, 0x6C))  # ll
        ):
            return p + 3
    return -1


@njit(cache=True, nogil=True, inline="always")
def _space_run_end(data, p, n, end, classes, space, dollar):
    """End of the whitespace pre-token at ``p`` (its first character ``n`` bytes; ``space``: whitespace's class in
    ``classes``): ``\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+``, and with ``dollar`` the whole run when it ends the text."""
    q = p + n
    last = p  # start of the run's last character
    last_newline = p if (data[p] == 0x0D or data[p] == 0x0A) else -1
    while q < end:
        cp2, n2 = _decode(data, q)
        if classes[cp2] != space:
            break
        if cp2 == 0x0D or cp2 == 0x0A:
            last_newline = q
        last = q
        q += n2
    if dollar and q == end:
        return q
    if last_newline >= 0:
        return last_newline + 1
    if q == end or last == p:
        return q
    return last


@njit(cache=True, nogil=True)
def split_pretoken_end(data, p, end, classes, dollar, digits, marks):
    """End of the pre-token at ``p`` under the cl100k / Llama 3 / Qwen family of patterns:

    ``(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?L+|\\p{N}{1,digits}| ?P+[\\r\\n]*``, then
    ``|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+``
    with ``L`` = ``\\p{L}`` (``[\\p{L}\\p{M}]`` with ``marks``, Qwen 3.5), ``P`` the rest but ``\\s`` and ``dollar``
    (cl100k) adding ``\\s++$`` before the whitespace alternatives. Possessive quantifiers (cl100k) end their
    alternative, so they change no match.
    """
    cp, n = _decode(data, p)
    cls = classes[cp]
    if cp == 0x27:
        c_end = _contraction_end(data, p, end)
        if c_end >= 0:
            return c_end
    if _is_letter(cls, marks):
        return _run_letters(data, p + n, end, classes, marks)
    if cp != 0x0D and cp != 0x0A and cls != S_LETTER and cls != S_NUMBER and p + n < end:
        cp2, n2 = _decode(data, p + n)
        if _is_letter(classes[cp2], marks):
            return _run_letters(data, p + n + n2, end, classes, marks)
    if cls == S_NUMBER:
        q = p + n
        k = 1
        while k < digits and q < end:
            cp2, n2 = _decode(data, q)
            if classes[cp2] != S_NUMBER:
                break
            q += n2
            k += 1
        return q
    start = -1
    if _is_punct(cls, marks):
        start = p + n
    elif cp == 0x20 and p + 1 < end:
        cp2, n2 = _decode(data, p + 1)
        if _is_punct(classes[cp2], marks):
            start = p + 1 + n2
    if start >= 0:
        q = start
        while q < end:
            cp2, n2 = _decode(data, q)
            if not _is_punct(classes[cp2], marks):
                break
            q += n2
        while q < end and (data[q] == 0x0D or data[q] == 0x0A):
            q += 1
        return q
    return _space_run_end(data, p, n, end, classes, S_SPACE, dollar)  # every other code point is whitespace here


@njit(cache=True, nogil=True, inline="always")
def _run_letters(data, q, end, classes, marks):
    while q < end:
        cp, n = _decode(data, q)
        if not _is_letter(classes[cp], marks):
            break
        q += n
    return q


# classes of :func:`cased_pretoken_end` (o200k): Lu and Lt, Ll, Lm and Lo (in both case classes), M (in both, but no
# letter), N, whitespace, the rest
C_OTHER, C_UPPER, C_LOWER, C_LETTER, C_MARK, C_NUMBER, C_SPACE = 0, 1, 2, 3, 4, 5, 6


@njit(cache=True, nogil=True, inline="always")
def _in_upper(c):
    """``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]``"""
    return c == C_UPPER or c == C_LETTER or c == C_MARK


@njit(cache=True, nogil=True, inline="always")
def _in_lower(c):
    """``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]``"""
    return c == C_LOWER or c == C_LETTER or c == C_MARK


@njit(cache=True, nogil=True)
def _cased_word_end(data, q, end, classes, lower_needed):
    """End of ``U*L+C?`` (``lower_needed``) or ``U+L*C?`` at ``q``, or -1, with U, L the upper and lower classes and C
    the optional contraction: the regex's backtracking of ``U*L+`` gives back the upper run's characters down to its
    last one that is in both classes when no lower-only character follows the run."""
    r = q
    last_both = -1  # end of the run's last character in both classes
    while r < end:
        cp, n = _decode(data, r)
        c = classes[cp]
        if not _in_upper(c):
            break
        if c != C_UPPER:
            last_both = r + n
        r += n
    follows_lower = False
    if r < end:
        cp, n = _decode(data, r)
        follows_lower = classes[cp] == C_LOWER
    if lower_needed and not follows_lower:
        if last_both < 0:
            return -1
        e = last_both
    else:
        if not lower_needed and r == q:
            return -1
        e = r
        while e < end:
            cp, n = _decode(data, e)
            if not _in_lower(classes[cp]):
                break
            e += n
    if e < end and data[e] == 0x27:
        c_end = _contraction_end(data, e, end)
        if c_end >= 0:
            return c_end
    return e


@njit(cache=True, nogil=True)
def cased_pretoken_end(data, p, end, classes):
    """End of the pre-token at ``p`` under o200k's pattern (``patterns.O200K``): ``P?U*L+C?|P?U+L*C?|\\p{N}{1,3}|
    ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`` with P = ``[^\\r\\n\\p{L}\\p{N}]``, U and L the
    upper and lower classes (:func:`_in_upper`, :func:`_in_lower`) and C the contractions; ``classes`` as ``C_*``."""
    cp, n = _decode(data, p)
    c = classes[cp]
    prefix = cp != 0x0D and cp != 0x0A and c != C_UPPER and c != C_LOWER and c != C_LETTER and c != C_NUMBER
    for lower_needed in (True, False):
        if prefix:
            e = _cased_word_end(data, p + n, end, classes, lower_needed)
            if e >= 0:
                return e
        e = _cased_word_end(data, p, end, classes, lower_needed)
        if e >= 0:
            return e
    if c == C_NUMBER:
        q = p + n
        k = 1
        while k < 3 and q < end:
            cp2, n2 = _decode(data, q)
            if classes[cp2] != C_NUMBER:
                break
            q += n2
            k += 1
        return q
    start = -1
    if c == C_OTHER or c == C_MARK:
        start = p + n
    elif cp == 0x20 and p + 1 < end:
        cp2, n2 = _decode(data, p + 1)
        c2 = classes[cp2]
        if c2 == C_OTHER or c2 == C_MARK:
            start = p + 1 + n2
    if start >= 0:
        q = start
        while q < end:
            cp2, n2 = _decode(data, q)
            c2 = classes[cp2]
            if c2 != C_OTHER and c2 != C_MARK:
                break
            q += n2
        while q < end and (data[q] == 0x0D or data[q] == 0x0A or data[q] == 0x2F):
            q += 1
        return q
    return _space_run_end(data, p, n, end, classes, C_SPACE, False)  # every other code point is whitespace here
