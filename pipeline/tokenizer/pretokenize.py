"""Pre-tokenization (GPT-2's pattern, or a named one of :mod:`patterns`), special-token splitting, pre-token
counting and safe streaming cuts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

import regex

from pipeline.tokenizer.patterns import NAMED_PATTERNS

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
PRETOKEN_RE = regex.compile(GPT2_PATTERN)
# The last position p with text[p-1] non-space and text[p] space: every GPT-2 pre-token that holds a
# non-space character ends before the next space, and the pattern has no look-behind, so the
# pre-tokens of text[:p] and text[p:] are exactly those of text (searched in reverse: the last one).
_LAST_CUT_RE = regex.compile(r"(?r)\S(?=\s)")
# The named patterns of patterns.py: a pre-token that holds a non-space character never goes on with U+0020
# (their whitespace-bearing pieces start with whitespace or one optional leading character; punctuation may take
# \r \n or / after it, never a space), and none looks behind, so a non-space -> space (U+0020) boundary is as safe.
_LAST_SPACE_CUT_RE = regex.compile(r"(?r)\S(?= )")


def pretoken_regex(pattern: str | None = None) -> regex.Pattern[str]:
    """The compiled pre-tokenizer: GPT-2's for ``None``, else the named pattern (``tokenizer.pattern``)."""
    if pattern is None:
        return PRETOKEN_RE
    if pattern not in _COMPILED:
        _COMPILED[pattern] = regex.compile(NAMED_PATTERNS[pattern])
    return _COMPILED[pattern]


_COMPILED: dict[str, regex.Pattern[str]] = {}


def cut_regex(pattern: str | None = None) -> regex.Pattern[str]:
    """The last-safe-cut search of :func:`safe_cut` for a pattern of :func:`pretoken_regex`."""
    return _LAST_CUT_RE if pattern is None else _LAST_SPACE_CUT_RE


class SpecialSplitter:
    """Splits text on special tokens, longest first (leftmost match, then the longest alternative)."""

    def __init__(self, special_tokens: Sequence[str] = ()) -> None:
        self.special_tokens = tuple(dict.fromkeys(special_tokens))
        ordered = sorted(self.special_tokens, key=len, reverse=True)
        self.max_len = max((len(t) for t in ordered), default=0)
        self._re = regex.compile("|".join(regex.escape(t) for t in ordered)) if ordered else None

    def split(self, text: str) -> Iterator[tuple[str, bool]]:
        """Yield (piece, is_special) in order; ordinary pieces are non-empty."""
        if self._re is None:
            if text:
                yield text, False
            return
        pos = 0
        for m in self._re.finditer(text):
            if m.start() > pos:
                yield text[pos : m.start()], False
            yield m.group(), True
            pos = m.end()
        if pos < len(text):
            yield text[pos:], False

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every special token match in ``text``."""
        return [] if self._re is None else [m.span() for m in self._re.finditer(text)]


def pretokens(text: str, pattern: str | None = None) -> list[str]:
    """Pre-tokens of ordinary text (no special-token handling), GPT-2's or a named pattern's."""
    found: list[str] = pretoken_regex(pattern).findall(text)
    return found


def count_pretokens(
    texts: Iterable[str], special_tokens: Sequence[str] = (), pattern: str | None = None
) -> Counter[bytes]:
    """Count UTF-8 pre-tokens over ``texts``; special tokens split the text and are not counted. ``pattern``:
    a named pre-tokenizer pattern (``tokenizer.pattern``), GPT-2's when ``None``.

    This is the per-partition map step of distributed training; Counters add up with ``+=``.
    """
    splitter = SpecialSplitter(special_tokens)
    counts: Counter[str] = Counter()
    findall = pretoken_regex(pattern).findall
    for text in texts:
        for piece, special in splitter.split(text):
            if not special:
                counts.update(findall(piece))
    return Counter({word.encode("utf-8"): n for word, n in counts.items()})


def safe_cut(text: str, splitter: SpecialSplitter, last_cut: regex.Pattern[str] = _LAST_CUT_RE) -> int:
    """Largest p such that encoding text[:p] and text[p:] separately equals encoding text.

    Candidates: a non-space -> space boundary (``last_cut``: :func:`cut_regex`) outside every special token,
    or the edge of a special token. p leaves the last ``max_len`` characters alone so that a special token
    cut by the end of the buffer cannot be mistaken for ordinary text. Returns 0 when no cut is safe.
    """
    limit = len(text) - splitter.max_len
    if limit <= 0:
        return 0
    spans = splitter.spans(text)
    best = 0
    for start, end in spans:  # the edges of a special token are always safe
        if end <= limit:
            best = end
        elif start <= limit:
            best = start
    search_end = limit + 1  # the boundary needs the space at index p to be present
    while True:
        m = last_cut.search(text, 0, min(search_end, len(text)))
        if m is None:
            return best
        p: int = m.end()
        if p <= best:
            return best
        inside = [s for s, e in spans if s < p < e]
        if not inside:
            return p
        search_end = min(inside)  # that special token's start is already a candidate in ``best``


def stream_pieces(
    file_obj: IO[str] | Iterable[str],
    splitter: SpecialSplitter,
    chunk_chars: int = 1 << 16,
    max_buffer: int = 1 << 22,
    pattern: str | None = None,
) -> Iterator[str]:
    """Yield consecutive pieces of a text stream that can be pre-tokenized independently.

    Reads ``chunk_chars`` at a time (``read`` when available, else iterates the object, e.g. lines).
    Memory stays bounded by ``max_buffer`` characters: only a run of more than that many characters
    without a safe cut (no whitespace) is cut arbitrarily, which may split a pre-token there.
    """
    read = getattr(file_obj, "read", None)
    if read is not None:
        chunks: Iterable[str] = iter(lambda: read(chunk_chars), "")
    else:
        chunks = file_obj
    buffer = ""
    last_cut = cut_regex(pattern)
    for chunk in chunks:
        buffer += chunk
        if len(buffer) < chunk_chars:
            continue
        cut = safe_cut(buffer, splitter, last_cut)
        if cut == 0 and len(buffer) > max_buffer:
            cut = len(buffer) - splitter.max_len
        if cut > 0:
            yield buffer[:cut]
            buffer = buffer[cut:]
    if buffer:
        yield buffer
