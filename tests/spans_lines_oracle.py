"""The line part's definition (docs/spans.md, Lines) as straightforward Python over the whole corpus, written from
CCNet (Wenzek et al. 2020, section 3.3, and its ``text_normalizer``), for the tests to compare the stage with."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# CCNet's UNICODE_PUNCT keys, removed with the C0 and C1 control characters (its PUNCT_OR_NON_PRINTING_CHARS_RE)
CCNET_PUNCT = "，。、„”“«»１」「《》´∶：？！（）；–—．～’…━〈〉【】％►"
_GONE = {ord(c): None for c in CCNET_PUNCT} | {c: None for c in [*range(32), *range(127, 160)]}


def oracle_normalize(line: str) -> str:
    """Stripped, lower case, combining marks gone after NFD, each digit 0, CCNet's punctuation and controls gone."""
    text = unicodedata.normalize("NFD", line.strip().lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    return re.sub(r"\d", "0", text).translate(_GONE)


def oracle_lines(
    docs: list[tuple[int, str]], min_repeats: int
) -> tuple[dict[int, str], set[int], dict[int, list[tuple[int, int, int, int, int]]]]:
    """-> (kept texts, documents left with nothing but whitespace, removed rows per document: start, end, copies,
    kept doc_id, kept start). Lines are split on newlines; a line whose normalized form is empty is never
    removed; of a normalized line with ``min_repeats`` or more occurrences in the corpus, every occurrence after
    the first (by doc_id, then line index) is dropped with one newline: the one after it when a kept line
    follows, else the one before it (none for a first line)."""
    ordered = sorted(docs)
    counts = Counter(n for _, text in ordered for line in text.split("\n") if (n := oracle_normalize(line)))
    first: dict[str, tuple[int, int]] = {}
    kept, too_short, rows = {}, set(), {}
    for doc_id, text in ordered:
        lines = text.split("\n")
        starts = [sum(len(line.encode("utf-8")) + 1 for line in lines[:i]) for i in range(len(lines))]
        dropped = []
        for index, line in enumerate(lines):
            norm = oracle_normalize(line)
            if norm and counts[norm] >= min_repeats and norm in first:
                dropped.append((index, counts[norm], *first[norm]))
            if norm:
                first.setdefault(norm, (doc_id, starts[index]))
        gone = {index for index, *_ in dropped}
        after = "\n".join(line for i, line in enumerate(lines) if i not in gone)
        removed = []
        for index, copies, kept_doc, kept_at in dropped:
            start, end = starts[index], starts[index] + len(lines[index].encode("utf-8"))
            if any(i not in gone for i in range(index + 1, len(lines))):
                end += 1  # a kept line follows: the newline after goes
            elif index:
                start -= 1  # else the newline before
            removed.append((start, end, copies, kept_doc, kept_at))
        if removed:
            rows[doc_id] = removed
        if removed and not after.strip():
            too_short.add(doc_id)
        else:
            kept[doc_id] = after
    return kept, too_short, rows
