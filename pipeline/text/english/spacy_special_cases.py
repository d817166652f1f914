"""spaCy's special cases that the affix rules split (emoticons such as ``:)``, abbreviations): their pieces, found
side by side in a token list, are rejoined into the special case's tokens, longest match first."""

from __future__ import annotations

from pipeline.text.english.spacy_affixes import SPECIALS, affixes


def _matcher_table() -> dict[tuple[str, ...], str]:
    """Special cases the affix rules split, keyed by the pieces they are split into."""
    table: dict[tuple[str, ...], str] = {}
    for text in SPECIALS:
        pieces = tuple(affixes(text, specials=False))
        if len(pieces) > 1:
            table.setdefault(pieces, text)
    return table


MATCHER = _matcher_table()
_MATCHER_LENGTHS = sorted({len(k) for k in MATCHER}, reverse=True)
_MATCHER_FIRST = frozenset(k[0] for k in MATCHER)
PAIRS = frozenset(pair for k in MATCHER for pair in zip(k, k[1:], strict=False))  # side by side in one


def special_matches(tokens: list[str], groups: list[int] | None = None) -> list[tuple[int, int]]:
    """Spans of side-by-side pieces of a special case to rejoin. Matches are taken longest first, then
    leftmost; one is dropped when its first or last token lies in a match taken before it, kept or dropped
    (spaCy's outcome). With ``groups`` (the chunk of each token), a match across chunks takes part but is
    never rejoined."""
    if PAIRS.isdisjoint(zip(tokens, tokens[1:], strict=False)):  # a match begins with a pair of its pieces
        return []
    matches = candidate_matches(tokens)
    seen: set[int] = set()
    kept: list[tuple[int, int]] = []
    for start, end in sorted(matches, key=lambda m: (m[0] - m[1], m[0])):
        if start not in seen and end - 1 not in seen and (groups is None or groups[start] == groups[end - 1]):
            kept.append((start, end))
        seen.update(range(start, end))
    return sorted(kept)


def candidate_matches(tokens: list[str]) -> list[tuple[int, int]]:
    """Every span of side-by-side pieces of a special case, overlapping ones too, before any is taken."""
    matches: list[tuple[int, int]] = []
    for i, tok in enumerate(tokens):
        if tok in _MATCHER_FIRST:
            for n in _MATCHER_LENGTHS:
                if i + n <= len(tokens) and tuple(tokens[i : i + n]) in MATCHER:
                    matches.append((i, i + n))
    return matches


def _rejoin(tokens: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """``tokens`` with each span replaced by its special case's tokens."""
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.extend(tokens[pos:start])
        out.extend(SPECIALS[MATCHER[tuple(tokens[start:end])]])
        pos = end
    out.extend(tokens[pos:])
    return out


def restore_specials(tokens: list[str]) -> list[str]:
    """Rejoin the special cases split inside one chunk."""
    spans = special_matches(tokens)
    return _rejoin(tokens, spans) if spans else tokens
