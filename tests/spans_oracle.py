"""The exact-substring oracle of the spans tests, written from Lee et al. 2022's definition
(docs/spans.md, Exact substrings) on a suffix array: a substring of at least ``k`` bytes that occurs more than
once in the corpus, never across a document boundary, is removed from every occurrence but the first (lowest
doc_id, then position). pydivsufsort builds the suffix array and the LCP array over the whole concatenated
corpus."""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np

from tests.oracles import missing_tool, require_oracle

SEPARATOR = b"\xff"  # never in UTF-8 text: a window holding it crosses a document boundary
DOC_ROOTS = [Path("/usr/share/doc/python3.11/html/_sources"), Path("/usr/share/doc/python3/html/_sources")]


def oracle_ranges(docs: list[tuple[int, str]], k: int) -> dict[int, list[tuple[int, int]]]:
    """doc_id -> the merged byte ranges ``[start, end)`` removed from it, by the suffix array's definition."""
    divsufsort = require_oracle("pydivsufsort")
    ordered = sorted(docs)
    blobs = [text.encode("utf-8") for _, text in ordered]
    offsets = np.cumsum([0] + [len(b) + 1 for b in blobs])
    corpus = SEPARATOR.join(blobs) + SEPARATOR
    sa = divsufsort.divsufsort(corpus)
    lcp = divsufsort.kasai(corpus, sa)  # lcp[i]: common prefix of the suffixes sa[i] and sa[i + 1]
    is_sep = np.frombuffer(corpus, dtype=np.uint8) == 0xFF
    sep_before = np.concatenate(([0], np.cumsum(is_sep)))  # separators in corpus[:i]
    n = len(corpus)
    removed: list[list[tuple[int, int]]] = [[] for _ in blobs]
    i = 0
    while i < n:
        j = i
        while j + 1 < n and lcp[j] >= k:
            j += 1
        group = sa[i : j + 1]  # suffixes sharing their first k bytes (one suffix when j == i)
        start = int(group[0])
        inside = start + k <= n and sep_before[start + k] == sep_before[start]
        if len(group) >= 2 and inside:
            first = int(group.min())
            for p in group.tolist():
                if p != first:
                    doc = int(np.searchsorted(offsets, p, side="right")) - 1
                    local = p - int(offsets[doc])
                    removed[doc].append((local, local + k))
        i = j + 1
    result = {}
    for (doc_id, _), ranges in zip(ordered, removed, strict=True):
        merged: list[tuple[int, int]] = []
        for s, e in sorted(ranges):
            if merged and s <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], e))
            else:
                merged.append((s, e))
        if merged:
            result[doc_id] = merged
    return result


def oracle_text(text: str, ranges: list[tuple[int, int]]) -> str:
    """``text`` without the byte ranges, each shrunk to the whole characters inside it."""
    data = text.encode("utf-8")
    starts_char = [i for i in range(len(data) + 1) if i == len(data) or (data[i] & 0xC0) != 0x80]
    keep = bytearray()
    at = 0
    for s, e in ranges:
        s2 = starts_char[bisect.bisect_left(starts_char, s)]
        e2 = starts_char[bisect.bisect_right(starts_char, e) - 1]
        if e2 > s2:
            keep += data[at:s2]
            at = e2
    keep += data[at:]
    return keep.decode("utf-8")


def planted_documents() -> list[tuple[int, str]]:
    """Hand-made cases: a repeat across a boundary, overlapping repeats, a repeat inside one document, a repeat in
    a document with a lower doc_id than the first one written, and text with multi-byte characters."""
    a = "The quick brown fox jumps over the lazy dog, every single day of the week. "
    b = "Licensed under the Apache License, Version 2.0; you may not use this file except in compliance. "
    c = "Ünïcödé → spans: «Grüße aus Köln», 日本語のテキストも少し入れておきます。"
    return [
        (10, "start " + a + " middle " + b + " end"),
        (11, "other " + b + " tail " + a[:40]),  # a[:40] < k: not removed by itself
        (12, a[:30]),  # ends one document ...
        (13, a[30:] + " and more text that is only here, nothing repeated at all."),  # ... the rest starts this one
        (14, "inside: " + c + " | again: " + c + " | " + c),
        (-5, "negative id holds it first: " + b),
        (15, "overlap " + a + b + " x " + b + a),
        (16, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
        (17, "   "),
        (18, "unique text with no repeats of any length worth removing from the corpus at all."),
    ]


def real_documents(limit_bytes: int) -> list[tuple[int, str]]:
    """Python's documentation sources (reStructuredText, real prose full of repeated boilerplate), one document
    per file, up to ``limit_bytes``."""
    root = next((r for r in DOC_ROOTS if r.is_dir()), None)
    if root is None:
        missing_tool(f"Python's documentation sources not found at {DOC_ROOTS[0]} (apt-get install python3-doc)")
    docs, total = [], 0
    for i, path in enumerate(sorted(root.rglob("*.txt"))):
        text = path.read_text(encoding="utf-8", errors="replace")
        docs.append((1000 + i * 7919 % 100_003, text))
        total += len(text.encode("utf-8"))
        if total >= limit_bytes:
            break
    return docs


def oracle_word_ranges(docs: list[tuple[int, str]], k: int) -> dict[int, list[tuple[int, int]]]:
    """The same definition over words (runs of bytes other than ASCII whitespace), by brute force: every window
    of k words, as the bytes from its first word's start to its last word's end; all but the first copy go."""
    import re

    copies: dict[bytes, list[tuple[int, int, int]]] = {}
    for doc_id, text in sorted(docs):
        data = text.encode("utf-8")
        words = [(m.start(), m.end()) for m in re.finditer(rb"[^\t\n\x0b\x0c\r ]+", data)]
        for i in range(len(words) - k + 1):
            start, end = words[i][0], words[i + k - 1][1]
            copies.setdefault(data[start:end], []).append((doc_id, start, end))
    ranges: dict[int, list[tuple[int, int]]] = {}
    for found in copies.values():
        for doc_id, start, end in sorted(found)[1:]:
            ranges.setdefault(doc_id, []).append((start, end))
    result = {}
    for doc_id, spans in ranges.items():
        merged: list[tuple[int, int]] = []
        for s, e in sorted(spans):
            if merged and s <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], e))
            else:
                merged.append((s, e))
        result[doc_id] = merged
    return result
