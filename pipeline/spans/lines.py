"""Line-level dedup (docs/spans.md, Lines): CCNet's paragraph dedup (Wenzek et al. 2020, "CCNet: Extracting High
Quality Monolingual Datasets from Web Crawl Data", section 3.3), one document at a time, and the Arrow batch
functions of its ``mapInArrow`` steps. No Spark: the stage (``pipeline.spans.stage``) finds the repeated lines
with a shuffle.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa

from pipeline.spans.sentence_batches import dropped_run, rewrite_batches

KIND_LINES = "lines"
# The non-ASCII punctuation CCNet's text_normalizer removes (its UNICODE_PUNCT keys), and the control characters
# (U+0000-U+001F, U+007F-U+009F) it removes with them; ASCII punctuation stays, as in CCNet.
_PUNCT = "，。、„”“«»１」「《》´∶：？！（）；–—．～’…━〈〉【】％►"
_REMOVED = re.compile("[" + re.escape(_PUNCT) + "".join(map(chr, [*range(32), *range(127, 160)])) + "]")
_DIGIT = re.compile(r"\d")
LINES = pa.schema(
    [("hash", pa.int64()), ("norm", pa.binary()), ("doc_id", pa.int64()), ("line", pa.int32()),
     ("start", pa.int64()), ("end", pa.int64())]
)  # fmt: skip


def normalize_line(line: str) -> str:
    """A line as CCNet compares it: stripped, lower case, accents stripped (NFD, combining marks dropped: the
    paper's rule; the code's ``normalize_for_dedup`` skips it), every digit (``\\d``) as ``0``, CCNet's unicode
    punctuation and the control characters removed."""
    line = line.strip().lower()
    line = "".join(c for c in unicodedata.normalize("NFD", line) if unicodedata.category(c) != "Mn")
    return _REMOVED.sub("", _DIGIT.sub("0", line))


def line_hash(norm: bytes) -> int:
    """The first 8 bytes of the SHA-1 of a normalized line, little-endian, signed (CCNet's ``str_hash``)."""
    return int.from_bytes(hashlib.sha1(norm).digest()[:8], "little", signed=True)


def line_bounds(text: str) -> list[tuple[int, int]]:
    """The UTF-8 byte range of every line of ``text`` (split on ``\\n``, as CCNet does), the newline excluded."""
    bounds, at = [], 0
    for piece in text.encode("utf-8").split(b"\n"):
        bounds.append((at, at + len(piece)))
        at += len(piece) + 1
    return bounds


def removed_range(bounds: list[tuple[int, int]], index: int, kept_after: bool) -> tuple[int, int]:
    """The bytes dropping line ``index`` removes: the line and the newline after it when a kept line follows,
    else the newline before it (none for the first line), so the kept lines are joined by one newline each, as
    CCNet's ``"\\n".join`` leaves them, and the ranges of one document never overlap."""
    start, end = bounds[index]
    if kept_after:
        return start, end + 1
    return (start - 1, end) if index > 0 else (start, end)


def line_rows(
    batches: Iterable[pa.RecordBatch], hash_of: Callable[[bytes], int] = line_hash
) -> Iterator[pa.RecordBatch]:
    """Documents (doc_id, text) -> one row per line whose normalized form is not empty (LINES): its hash, the
    normalized UTF-8 bytes, doc_id, index among the document's lines and byte range."""
    for batch in batches:
        out: dict[str, list[Any]] = {name: [] for name in LINES.names}
        for doc_id, text in zip(batch.column("doc_id").to_pylist(), batch.column("text").to_pylist(), strict=True):
            data = text.encode("utf-8")
            for index, (start, end) in enumerate(line_bounds(text)):
                norm = normalize_line(data[start:end].decode("utf-8")).encode("utf-8")
                if not norm:
                    continue
                for name, value in zip(LINES.names, (hash_of(norm), norm, doc_id, index, start, end), strict=True):
                    out[name].append(value)
        yield pa.RecordBatch.from_pydict(out, schema=LINES)


def drop_lines(text: str, dropped: list[int]) -> tuple[str, list[tuple[int, int, int]]]:
    """``text`` without the lines numbered in ``dropped``, the kept lines joined by ``\\n``; and the removed
    byte ranges ``(start, end, line)``, one per dropped line (removed_range): together exactly the bytes cut."""
    bounds = line_bounds(text)
    data = text.encode("utf-8")
    gone = set(dropped)
    kept = [i for i in range(len(bounds)) if i not in gone]
    last_kept = kept[-1] if kept else -1
    text_kept = b"\n".join(data[bounds[i][0] : bounds[i][1]] for i in kept).decode("utf-8")
    return text_kept, [(*removed_range(bounds, i, i < last_kept), i) for i in sorted(gone)]


def line_rewrite_batches(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Documents with their later copies (``dups``: list of line, copies, kept_doc_id, kept_start, or null) ->
    the documents' columns with those lines dropped, the bytes removed, whether the document is now left with
    nothing but whitespace (``too_short``: CCNet drops a document with no line kept) and one run per dropped
    line (``runs``, in bytes of the text as it was)."""

    def rewrite(text: str, dups: list[dict[str, Any]]) -> tuple[str, int, bool, list[dict[str, int]]]:
        if not dups:
            return text, 0, False, []
        by_line = {d["line"]: d for d in dups}
        after, ranges = drop_lines(text, list(by_line))
        runs = [dropped_run(s, e, by_line[i]) for s, e, i in ranges]
        return after, len(text.encode("utf-8")) - len(after.encode("utf-8")), not after.strip(), runs

    return rewrite_batches(batches, schema, rewrite)
