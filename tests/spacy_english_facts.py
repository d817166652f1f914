"""Facts about spaCy's blank English tokenizer, measured through its public API (oracle side only).

``measure()`` probes ``spacy.blank("en")`` as a black box: which characters each of its rule classes
accepts, its special cases and the sentencizer's sentence-final characters. The test compares
``pipeline/text/english/english_tables.py`` with a fresh measurement; running this file regenerates that
module (``python tests/spacy_english_facts.py > pipeline/text/english/english_tables.py``).
"""

from __future__ import annotations

import re
import sys
from typing import Any

_BRACKET = re.compile(r"\[(?:\\.|[^\]\\])+\]")


_ALL = "\x00".join(map(chr, range(sys.maxunicode + 1)))  # every code point, each between two NULs


def _members(char_class: str) -> frozenset[int]:
    """Code points a regex character class matches."""
    return _whole(char_class)


def _whole(pattern: str) -> frozenset[int]:
    """Code points that ``pattern`` matches as a whole (with NUL on either side)."""
    return frozenset(ord(m) for m in re.findall(f"(?<=\x00)(?:{pattern})(?=\x00)", _ALL) if len(m) == 1)


def ranges(points: frozenset[int]) -> str:
    """A character-class body (``\\uXXXX-\\uYYYY`` ranges) accepting exactly ``points``."""
    out: list[list[int]] = []
    for cp in sorted(points):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])

    def esc(cp: int) -> str:
        return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"

    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in out)


def _classes_of(pattern: str) -> list[frozenset[int]]:
    return [_members(m.group(0)) for m in _BRACKET.finditer(pattern)]


def _alternation(pattern: str) -> list[str]:
    """The alternatives of the ``(?:a|b|...)`` group of a lookbehind-guarded suffix rule."""
    body = pattern[pattern.index("(?:") + 3 : pattern.rindex(")")]
    return body.split("|")


def measure() -> dict[str, Any]:
    """Every table ``pipeline/text/english/english_tables.py`` holds, measured from spaCy."""
    import spacy

    nlp = spacy.blank("en")
    tok = nlp.tokenizer
    defaults = nlp.Defaults
    suffixes = list(defaults.suffixes)
    infixes = list(defaults.infixes)
    long_suffix = [p for p in suffixes if len(p) >= 60]
    currency = _alternation(long_suffix[1])
    units = _alternation(long_suffix[2])
    (dot_after,) = _classes_of(long_suffix[3])
    upper, _ = _classes_of(long_suffix[4])
    icons = _members(long_suffix[0])
    lower_q, upper_q = _classes_of([p for p in infixes if len(p) >= 60][1])
    (alpha, _) = _classes_of([p for p in infixes if len(p) >= 60][2])
    url = tok.url_match.__self__.pattern
    url_classes = _classes_of(url)
    lower = url_classes[-2]
    quotes = lower_q - lower
    assert upper_q - upper == quotes
    # a character that is a whole prefix (suffix) on its own; "+" is its own rule (not before a digit)
    prefix_single = _whole("|".join(defaults.prefixes)) - {ord("+")}
    suffix_single = _whole("|".join(suffixes))
    specials = {text: tuple(piece[65] for piece in pieces) for text, pieces in sorted(tok.rules.items())}
    spaced = {text for text in specials if any(c.isspace() for c in text)}
    assert all(len(text) == 1 and specials[text] == (text,) for text in spaced)
    sentencizer = nlp.add_pipe("sentencizer")
    return {
        "LOWER": ranges(lower),
        "UPPER": ranges(upper),
        "ALPHA": ranges(alpha),
        "QUOTES": ranges(quotes),
        "ICONS": ranges(icons),
        "DOT_AFTER": ranges(dot_after),
        "PREFIX_CHARS": ranges(prefix_single),
        "SUFFIX_CHARS": ranges(suffix_single),
        "CURRENCY": tuple(currency),
        "UNITS": tuple(units),
        "SENTENCE_END": "".join(sorted(sentencizer.punct_chars)),
        "SPECIAL_SPACES": "".join(sorted(spaced)),
        "SPECIALS": tuple(" ".join(pieces) for text, pieces in specials.items() if text not in spaced),
    }


def _pieces(text: str) -> list[str]:
    """``text`` cut between escapes, at most 100 characters a piece."""
    units = re.findall(r"\\u[0-9a-f]{4}|\\U[0-9a-f]{8}|.", text)
    out = [""]
    for unit in units:
        if len(out[-1]) + len(unit) > 100:
            out.append("")
        out[-1] += unit
    return out


def _packed(items: tuple[str, ...]) -> list[str]:
    """Lines of ``repr``s of ``items``, several to a line."""
    lines = [""]
    for item in items:
        text = repr(item) + ", "
        if len(lines[-1]) + len(text) > 110:
            lines.append("")
        lines[-1] += text
    return [line.rstrip() for line in lines]


def main() -> None:
    """Print the tables module."""
    facts = measure()
    print('"""English tokenizer tables measured from spaCy 3.8 as a black box (tests/spacy_english_facts.py).')
    print()
    print("Character classes are regex class bodies. SPECIALS are spaCy's special cases, each written as its tokens")
    print("joined by a space (the special case is their concatenation); SPECIAL_SPACES are the whitespace ones.")
    print('Regenerated, never edited by hand; tests/unit/text/test_english_words.py checks it against spaCy."""')
    print()
    print("# fmt: off")
    for key, value in facts.items():
        if isinstance(value, tuple):
            print(f"{key}: tuple[str, ...] = (")
            for line in _packed(value):
                print(f"    {line}")
            print(")")
        elif key in ("SENTENCE_END", "SPECIAL_SPACES"):
            print(f"{key} = (")
            for start in range(0, len(value), 50):
                print(f"    {value[start : start + 50]!r}")
            print(")")
        else:
            print(f"{key} = (")
            for piece in _pieces(value):
                print(f'    r"{piece}"')
            print(")")
    print("# fmt: on")


if __name__ == "__main__":
    main()
