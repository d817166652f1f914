"""Character sets of spaCy's rule tables (``english_tables.py``: class bodies of ``\\uXXXX`` escapes and ranges)
as Python sets and as fast regular-expression fragments.

Python's ``re`` tests a class's characters up to U+FFFF in one bitmap lookup but the ranges above it one by one,
so a class with a hundred astral ranges costs a hundred comparisons for every character it does not hold.
:func:`char_class` matches the same characters with the astral ranges behind a single range test."""

from __future__ import annotations

import re

_ITEM = re.compile(r"\\[uU]([0-9a-fA-F]+)(?:-\\[uU]([0-9a-fA-F]+))?")
_BMP_END = 0xFFFF


def _ranges(body: str) -> list[tuple[int, int]]:
    """The code point ranges of a class body made of ``\\uXXXX`` escapes and ranges."""
    found = [(int(a, 16), int(b or a, 16)) for a, b in _ITEM.findall(body)]
    if _ITEM.sub("", body):
        raise ValueError(f"not a class body of \\u escapes: {body[:40]!r}")
    return found


def expand(body: str) -> frozenset[str]:
    """The characters of a class body."""
    return frozenset(chr(c) for first, last in _ranges(body) for c in range(first, last + 1))


def _escape(first: int, last: int) -> str:
    one = f"\\U{first:08x}"
    return one if first == last else f"{one}-\\U{last:08x}"


def char_class_parts(*bodies: str, extra: str = "") -> tuple[str, str | None]:
    """Two regex classes that together hold the characters of the class bodies and of ``extra`` (literal class
    syntax such as ``0-9``): those up to U+FFFF, and the astral ones (None when there are none)."""
    low: list[str] = []
    high: list[str] = []
    for first, last in (r for body in bodies for r in _ranges(body)):
        if first <= _BMP_END:
            low.append(_escape(first, min(last, _BMP_END)))
        if last > _BMP_END:
            high.append(_escape(max(first, _BMP_END + 1), last))
    return "[" + "".join(low) + extra + "]", ("[" + "".join(high) + "]" if high else None)


ASTRAL = "[\\U00010000-\\U0010ffff]"  # any character above U+FFFF


def char_class(*bodies: str, extra: str = "") -> str:
    """A regex fragment matching one character of the class bodies or of ``extra``, equal to
    ``"[" + "".join(bodies) + extra + "]"``."""
    bmp, astral = char_class_parts(*bodies, extra=extra)
    return bmp if astral is None else f"(?:{bmp}|(?={ASTRAL}){astral})"
