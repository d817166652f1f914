"""Exact-substring kernels (docs/spans.md, Exact substrings): a text's tokens, the 64-bit hash of every window of
``k`` tokens, the byte range of a window, merging removed ranges and cutting them out of a text.

Pure numpy. A hash only proposes candidates: the stage confirms every candidate on the window's bytes, so a
collision never removes text.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import numpy.typing as npt

from pipeline.numba_backend import SPANS

TOKENIZERS = ("bytes", "words")
_WHITESPACE = np.array([9, 10, 11, 12, 13, 32], dtype=np.uint8)  # ASCII whitespace: what separates words
_P = np.uint64(0x9E3779B97F4A7C15)  # the polynomial's base (odd: multiplication mod 2**64 is invertible)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_BYTE_VALUES = ((np.arange(256, dtype=np.uint64) + np.uint64(1)) * np.uint64(0xD6E8FEB86659FD93)) | np.uint64(1)

Int64s = npt.NDArray[np.int64]
UInt64s = npt.NDArray[np.uint64]


def token_bounds(data: bytes, tokenizer: str) -> tuple[Int64s, Int64s]:
    """The byte range ``[start, end)`` of every token of UTF-8 ``data``: each byte (``bytes``) or each maximal run
    of bytes other than ASCII whitespace (``words``)."""
    if tokenizer == "bytes":
        starts = np.arange(len(data), dtype=np.int64)
        return starts, starts + 1
    if tokenizer != "words":
        raise ValueError(f"unknown tokenizer {tokenizer!r} (one of {', '.join(TOKENIZERS)})")
    word = ~np.isin(np.frombuffer(data, dtype=np.uint8), _WHITESPACE)
    edges = np.diff(np.concatenate(([False], word, [False])).astype(np.int8))
    return np.flatnonzero(edges == 1).astype(np.int64), np.flatnonzero(edges == -1).astype(np.int64)


def token_hashes(data: bytes, starts: Int64s, ends: Int64s) -> UInt64s:
    """A 64-bit value per token: a polynomial over its bytes (order-sensitive), mod 2**64."""
    raw = np.frombuffer(data, dtype=np.uint8)
    if len(starts) == 0:
        return np.zeros(0, dtype=np.uint64)
    if bool(np.all(ends - starts == 1)) and len(starts) == len(raw):
        values: UInt64s = _BYTE_VALUES[raw]
        return values
    lengths = ends - starts
    heads = np.cumsum(lengths) - lengths  # where each token's bytes begin in the concatenation of all tokens
    offsets = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(heads, lengths)  # position inside its token
    inside = np.repeat(starts, lengths) + offsets  # the byte of data at each place of the concatenation
    powers = np.cumprod(np.full(int(lengths.max()), _P, dtype=np.uint64))
    with np.errstate(over="ignore"):
        terms = _BYTE_VALUES[raw[inside]] * powers[offsets]
        summed: UInt64s = np.add.reduceat(terms, heads) + lengths.astype(np.uint64) * _MIX1
    return summed


def _power(exponent: int) -> np.uint64:
    power: np.uint64 = np.uint64(pow(int(_P), exponent, 2**64))
    return power


def window_hashes(tokens: UInt64s, k: int) -> npt.NDArray[np.int64]:
    """The hash of every window of ``k`` consecutive tokens (``len(tokens) - k + 1`` of them, none when fewer
    tokens): the polynomial ``sum(t[i + j] * P**(k - 1 - j))`` mod 2**64, built by doubling, then mixed."""
    m = len(tokens)
    if k < 1:
        raise ValueError("k must be >= 1")
    if m < k:
        return np.zeros(0, dtype=np.int64)
    with np.errstate(over="ignore"):
        acc: UInt64s | None = None
        acc_len = 0
        block, block_len, rest = tokens.astype(np.uint64), 1, k
        while True:
            if rest & 1:
                if acc is None:
                    acc, acc_len = block, block_len
                else:
                    n = m - acc_len - block_len + 1
                    acc = acc[:n] * _power(block_len) + block[acc_len : acc_len + n]
                    acc_len += block_len
            rest >>= 1
            if not rest:
                break
            n = m - 2 * block_len + 1
            block = block[:n] * _power(block_len) + block[block_len : block_len + n]
            block_len *= 2
        assert acc is not None and acc_len == k
        mixed = acc[: m - k + 1].copy()
        mixed ^= mixed >> np.uint64(31)
        mixed *= _MIX2
        mixed ^= mixed >> np.uint64(29)
    viewed: npt.NDArray[np.int64] = mixed.view(np.int64)
    return viewed


def text_windows(data: bytes, k: int, tokenizer: str) -> tuple[npt.NDArray[np.int64], Int64s, Int64s]:
    """Every window of ``k`` tokens of ``data``: its hash, its first byte and the byte after its last."""
    starts, ends = token_bounds(data, tokenizer)
    hashes = window_hashes(token_hashes(data, starts, ends), k)
    count = len(hashes)
    return hashes, starts[:count], ends[k - 1 : k - 1 + count]


def merge_ranges(starts: Int64s, ends: Int64s) -> tuple[Int64s, Int64s]:
    """The union of ranges ``[start, end)`` as sorted disjoint ranges (touching ranges are joined)."""
    if len(starts) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.lexsort((ends, starts))
    s, e = np.asarray(starts, dtype=np.int64)[order], np.asarray(ends, dtype=np.int64)[order]
    reach = np.maximum.accumulate(e)
    new = np.concatenate(([True], s[1:] > reach[:-1]))
    heads = np.flatnonzero(new)
    return s[heads], np.maximum.reduceat(e, heads)


def char_aligned(data: bytes, starts: Int64s, ends: Int64s) -> tuple[Int64s, Int64s]:
    """Ranges shrunk to whole UTF-8 characters: a start moves forward and an end back to a character's first
    byte, so cutting them keeps the text valid (an emptied range is dropped)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    lead = np.concatenate((((raw & 0xC0) != 0x80), [True]))  # byte i starts a character (or i == len)
    next_lead = np.flatnonzero(lead)
    s = next_lead[np.searchsorted(next_lead, starts, side="left")]
    e = next_lead[np.searchsorted(next_lead, ends, side="right") - 1]
    keep = e > s
    return s[keep].astype(np.int64), e[keep].astype(np.int64)


def cut(data: bytes, starts: Int64s, ends: Int64s) -> bytes:
    """``data`` without the sorted disjoint ranges ``[start, end)``."""
    pieces, at = [], 0
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        pieces.append(data[at:s])
        at = e
    pieces.append(data[at:])
    return b"".join(pieces)


def anchor_length(k: int) -> int:
    """Tokens per anchor: half a window (at least one)."""
    return max(1, k // 2)


def window_anchors(tokens: UInt64s, k: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """For every window of ``k`` tokens, its anchor: the position of the least hash among the windows of
    ``anchor_length(k)`` tokens inside it (the first one on a tie), and the hashes of those shorter windows.

    Two windows with the same tokens have the same anchor offset and anchor hash, so a repeated window always
    holds a repeated anchor: grouping the (far fewer) anchors finds every candidate
    (docs/spans.md, Exact substrings)."""
    m = anchor_length(k)
    short = window_hashes(tokens, m)
    count = len(tokens) - k + 1
    if count <= 0:
        return np.zeros(0, dtype=np.int64), short
    w = k - m + 1
    if w == 1:
        return np.arange(count, dtype=np.int64), short
    views = np.lib.stride_tricks.sliding_window_view(short, w)
    chosen: npt.NDArray[np.int64] = np.argmin(views, axis=1).astype(np.int64) + np.arange(count, dtype=np.int64)
    return chosen, short


def anchor_ranges(tokens: UInt64s, k: int) -> tuple[Int64s, Int64s, Int64s, npt.NDArray[np.int64]]:
    """The distinct anchors of a text's windows of ``k`` tokens (:func:`window_anchors`): each one's token
    position, the first and last window that picks it (the windows picking one anchor are consecutive) and its
    hash."""
    anchors, short = window_anchors(tokens, k)
    if len(anchors) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    positions, firsts, counts = np.unique(anchors, return_index=True, return_counts=True)
    firsts = firsts.astype(np.int64)
    return positions.astype(np.int64), firsts, firsts + counts.astype(np.int64) - 1, short[positions]


def _context_bounds(context: bytes, tokenizer: str, k: int, windows: int) -> tuple[list[int], list[int]]:
    """The byte range inside ``context`` of each of its ``windows`` windows of ``k`` tokens (the context holds
    exactly those windows' tokens)."""
    if tokenizer == "bytes":
        starts = list(range(windows))
        return starts, [s + k for s in starts]
    token_starts, token_ends = token_bounds(context, tokenizer)
    return token_starts[:windows].tolist(), token_ends[k - 1 : k - 1 + windows].tolist()


def repeated_windows(
    positions: list[int], lows: list[int], highs: list[int], contexts: list[bytes], k: int, tokenizer: str
) -> list[tuple[int, int, int, int, int, int]]:
    """One anchor group's decisions (docs/spans.md, Exact substrings): occurrences of one anchor hash, ordered
    by (doc_id, position), each with its anchor's token position, the first and last window picking it and
    ``context``, the bytes of those windows. A window's copies all sit in the group with their anchor at the
    same offset, so windows are compared by (offset, bytes): the first occurrence is kept, every other one is
    removed. Bytes, not hashes, decide, so an anchor-hash collision never removes text.

    Returns one tuple per run of consecutive removed windows of one occurrence: (occurrence, first byte, end
    byte (both inside its context), copies, kept occurrence, kept window's first byte inside its context), the
    copies and kept copy being those of the run's first window."""
    seen: dict[tuple[int, bytes], list[int]] = {}  # (offset, bytes) -> [occurrence, window index, copies]
    bounds = []
    for row, (p, lo, hi, context) in enumerate(zip(positions, lows, highs, contexts, strict=True)):
        starts, ends = _context_bounds(context, tokenizer, k, hi - lo + 1)
        bounds.append((starts, ends))
        for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
            entry = seen.setdefault((p - lo - i, context[s:e]), [row, i, 0])
            entry[2] += 1
    runs: list[tuple[int, int, int, int, int, int]] = []
    for row, (p, lo, context) in enumerate(zip(positions, lows, contexts, strict=True)):
        starts, ends = bounds[row]
        open_run: list[int] | None = None
        for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
            first_row, first_i, copies = seen[(p - lo - i, context[s:e])]
            if first_row == row:  # the kept copy (a window has no other copy in its own occurrence)
                open_run = None
                continue
            if open_run is None:
                open_run = [row, s, e, copies, first_row, bounds[first_row][0][first_i]]
                runs.append(open_run)  # type: ignore[arg-type]
            else:
                open_run[2] = e
    return [tuple(run) for run in runs]  # type: ignore[misc]


def compiled(kernel: str, size: int) -> ModuleType | None:
    """The compiled twins (``exact_numba``) of :func:`anchor_ranges` and :func:`repeated_windows` when a call of
    ``kernel`` on ``size`` bytes runs compiled (the SPANS numba switch, ``PIPELINE_SPANS_NUMBA``), else None."""
    if not SPANS.use(kernel, size):
        return None
    # lazy: importing numba and loading the kernel costs seconds, paid only once a process uses it
    from pipeline.spans import exact_numba

    return exact_numba


def anchors_of(tokens: UInt64s, k: int, kernels: ModuleType | None) -> tuple[Int64s, Int64s, Int64s, Int64s]:
    """:func:`anchor_ranges`, through the compiled twin when ``kernels`` is given (same result)."""
    if kernels is None:
        return anchor_ranges(tokens, k)
    found: tuple[Int64s, Int64s, Int64s, Int64s] = kernels.anchor_ranges(tokens, k, anchor_length(k), _P, _MIX2)
    return found
