"""numba twin of :func:`pipeline.spans.exact.repeated_windows`, over many anchor groups in one call
(docs/spans.md, Exact substrings).

Every window of a group is keyed by (offset from its anchor, 64-bit polynomial hash of its bytes); a group's
windows are sorted by that key (stably, so occurrences stay in (doc_id, position) order) and each run of one
key is split into classes of equal bytes by comparing them, so the result is the Python path's whatever the
hash does: a collision only costs a comparison.
"""

from __future__ import annotations

import numpy as np
from numba import njit

BASE = np.uint64(0x9E3779B97F4A7C15)  # the window hash's base (odd); tests pass 0 to make keys collide


@njit(cache=True, nogil=True)
def _window_bounds(
    data: np.ndarray,
    offsets: np.ndarray,
    rows: np.ndarray,
    positions: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    k: int,
    words: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``rows``: where its windows begin in the flat arrays (``woff``), each window's byte range
    inside the row's context (``ws``, ``we``) and the anchor's first byte inside it (``anchor``)."""
    n = len(rows)
    anchor = np.empty(n, dtype=np.int64)
    woff = np.zeros(n + 1, dtype=np.int64)
    for j in range(n):
        woff[j + 1] = woff[j] + highs[rows[j]] - lows[rows[j]] + 1
    ws = np.empty(woff[n], dtype=np.int64)
    we = np.empty(woff[n], dtype=np.int64)
    for j in range(n):
        r = rows[j]
        count = woff[j + 1] - woff[j]
        base = offsets[r]
        length = offsets[r + 1] - base
        if not words:
            anchor[j] = positions[r] - lows[r]
            for i in range(count):
                ws[woff[j] + i] = i
                we[woff[j] + i] = i + k
            continue
        ts = np.empty(length + 1, dtype=np.int64)
        te = np.empty(length + 1, dtype=np.int64)
        t = 0
        inside = False
        for b in range(length):
            c = data[base + b]
            white = c == 32 or (c >= 9 and c <= 13)
            if not white and not inside:
                ts[t] = b
                inside = True
            elif white and inside:
                te[t] = b
                t += 1
                inside = False
        if inside:
            te[t] = length
        anchor[j] = ts[positions[r] - lows[r]]
        for i in range(count):
            ws[woff[j] + i] = ts[i]
            we[woff[j] + i] = te[i + k - 1]
    return woff, ws, we, anchor


@njit(cache=True, nogil=True)
def _extent(data: np.ndarray, a: int, b: int, before: int, after: int) -> tuple[int, int]:
    """How many bytes before ``a`` and ``b`` (at most ``before``) and from them on (at most ``after``) are equal:
    the common extension of two contexts aligned at their anchors."""
    left = 0
    while left < before and data[a - 1 - left] == data[b - 1 - left]:
        left += 1
    right = 0
    while right < after and data[a + right] == data[b + right]:
        right += 1
    return left, right


@njit(cache=True, nogil=True)
def repeated_windows_many(
    data: np.ndarray,
    offsets: np.ndarray,
    heads: np.ndarray,
    sizes: np.ndarray,
    positions: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    k: int,
    words: bool,
    multiplier: np.uint64,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The groups of rows ``[heads[g], heads[g] + sizes[g])`` (each ordered by doc_id, position; row ``r``'s
    context is ``data[offsets[r]:offsets[r + 1]]``) -> the runs of removed windows, as
    :func:`pipeline.spans.exact.repeated_windows` gives them, with rows numbered in the whole table: row, first
    byte, end byte, copies, kept row, kept window's first byte (bytes inside the row's context). ``multiplier``: the
    window hash's base (:data:`BASE`)."""
    n_rows = 0
    for g in range(len(heads)):
        n_rows += sizes[g]
    rows = np.empty(n_rows, dtype=np.int64)
    at = 0
    for g in range(len(heads)):
        for r in range(heads[g], heads[g] + sizes[g]):
            rows[at] = r
            at += 1
    woff, ws, we, anchor = _window_bounds(data, offsets, rows, positions, lows, highs, k, words)
    n_items = woff[n_rows]
    longest = 0
    for j in range(n_rows):
        longest = max(longest, offsets[rows[j] + 1] - offsets[rows[j]])
    powers = np.empty(longest + 1, dtype=np.uint64)
    powers[0] = np.uint64(1)
    for i in range(1, longest + 1):
        powers[i] = powers[i - 1] * multiplier
    prefix = np.empty(longest + 1, dtype=np.uint64)
    hashes = np.empty(n_items, dtype=np.uint64)
    item_offset = np.empty(n_items, dtype=np.int64)  # anchor position minus window position
    item_row = np.empty(n_items, dtype=np.int64)  # index into rows
    for j in range(n_rows):
        r = rows[j]
        base = offsets[r]
        prefix[0] = np.uint64(0)
        for b in range(offsets[r + 1] - base):
            prefix[b + 1] = prefix[b] * multiplier + np.uint64(data[base + b]) + np.uint64(1)
        for i in range(woff[j + 1] - woff[j]):
            item = woff[j] + i
            s, e = ws[item], we[item]
            hashes[item] = prefix[e] - prefix[s] * powers[e - s]
            item_offset[item] = positions[r] - lows[r] - i
            item_row[item] = j
    kept = np.arange(n_items)
    copies = np.ones(n_items, dtype=np.int64)
    reps = np.empty(n_items, dtype=np.int64)
    counts = np.empty(n_items, dtype=np.int64)
    cls = np.empty(n_items, dtype=np.int64)
    cached = np.full(n_rows, -1, dtype=np.int64)  # per row: the row its common extension was last taken with
    left = np.zeros(n_rows, dtype=np.int64)
    right = np.zeros(n_rows, dtype=np.int64)
    first_row = 0
    for g in range(len(heads)):
        lo_item, hi_item = woff[first_row], woff[first_row + sizes[g]]
        first_row += sizes[g]
        order = np.argsort(hashes[lo_item:hi_item], kind="mergesort")
        order = order[np.argsort(item_offset[lo_item:hi_item][order], kind="mergesort")] + lo_item
        a = 0
        while a < len(order):
            b = a + 1
            while (
                b < len(order)
                and hashes[order[b]] == hashes[order[a]]
                and item_offset[order[b]] == item_offset[order[a]]
            ):
                b += 1
            n_reps = 0
            for c in range(a, b):
                x = order[c]
                jx = item_row[x]
                found = -1
                for q in range(n_reps):
                    y = reps[q]
                    jy = item_row[y]
                    x_from, y_from = ws[x] - anchor[jx], ws[y] - anchor[jy]  # <= 0: a window holds its anchor
                    if x_from != y_from or we[x] - ws[x] != we[y] - ws[y]:
                        continue
                    if cached[jx] != jy:  # the two contexts compared once, around their anchors
                        cached[jx] = jy
                        x_len, y_len = (
                            offsets[rows[jx] + 1] - offsets[rows[jx]],
                            offsets[rows[jy] + 1] - offsets[rows[jy]],
                        )
                        left[jx], right[jx] = _extent(
                            data, offsets[rows[jx]] + anchor[jx], offsets[rows[jy]] + anchor[jy],
                            min(anchor[jx], anchor[jy]), min(x_len - anchor[jx], y_len - anchor[jy]),
                        )  # fmt: skip
                    if -x_from <= left[jx] and we[x] - anchor[jx] <= right[jx]:
                        found = q
                        break
                if found < 0:
                    reps[n_reps] = x
                    counts[n_reps] = 0
                    found = n_reps
                    n_reps += 1
                counts[found] += 1
                cls[c - a] = found
            for c in range(a, b):
                kept[order[c]] = reps[cls[c - a]]
                copies[order[c]] = counts[cls[c - a]]
            a = b
    out_row = np.empty(n_items, dtype=np.int64)
    out_start = np.empty(n_items, dtype=np.int64)
    out_end = np.empty(n_items, dtype=np.int64)
    out_copies = np.empty(n_items, dtype=np.int64)
    out_kept_row = np.empty(n_items, dtype=np.int64)
    out_kept_at = np.empty(n_items, dtype=np.int64)
    n_out = 0
    for j in range(n_rows):
        open_run = False
        for item in range(woff[j], woff[j + 1]):
            if kept[item] == item:
                open_run = False
                continue
            if open_run:
                out_end[n_out - 1] = we[item]
                continue
            out_row[n_out] = rows[j]
            out_start[n_out] = ws[item]
            out_end[n_out] = we[item]
            out_copies[n_out] = copies[item]
            out_kept_row[n_out] = rows[item_row[kept[item]]]
            out_kept_at[n_out] = ws[kept[item]]
            n_out += 1
            open_run = True
    return (
        out_row[:n_out],
        out_start[:n_out],
        out_end[:n_out],
        out_copies[:n_out],
        out_kept_row[:n_out],
        out_kept_at[:n_out],
    )


@njit(cache=True, nogil=True)
def anchor_ranges(
    tokens: np.ndarray, k: int, m: int, base: np.uint64, mix: np.uint64
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`pipeline.spans.exact.anchor_ranges` in one pass: the hashes of the windows of ``m`` tokens
    (``base`` and ``mix``: exact.window_hashes' constants, so the values are the same), the least of each
    ``k - m + 1`` consecutive ones (the first on a tie) by a monotone queue, and each distinct anchor's first
    and last window."""
    n = len(tokens)
    count = n - k + 1
    if count <= 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    top = np.uint64(1)
    for _ in range(m - 1):
        top = top * base
    short_u = np.empty(n - m + 1, dtype=np.uint64)
    h = np.uint64(0)
    for j in range(m):
        h = h * base + tokens[j]
    for i in range(n - m + 1):
        if i > 0:
            h = (h - tokens[i - 1] * top) * base + tokens[i + m - 1]
        x = h ^ (h >> np.uint64(31))
        x = x * mix
        short_u[i] = x ^ (x >> np.uint64(29))
    short = short_u.view(np.int64)
    w = k - m + 1
    queue = np.empty(n - m + 1, dtype=np.int64)
    head, tail = 0, 0
    positions = np.empty(count, dtype=np.int64)
    firsts = np.empty(count, dtype=np.int64)
    lasts = np.empty(count, dtype=np.int64)
    n_out = 0
    for i in range(n - m + 1):
        while tail > head and short[queue[tail - 1]] > short[i]:
            tail -= 1
        queue[tail] = i
        tail += 1
        q = i - w + 1  # the window of k tokens whose last m-window is i
        if q < 0:
            continue
        while queue[head] < q:
            head += 1
        chosen = queue[head]
        if n_out > 0 and positions[n_out - 1] == chosen:
            lasts[n_out - 1] = q
        else:
            positions[n_out] = chosen
            firsts[n_out] = q
            lasts[n_out] = q
            n_out += 1
    hashes = np.empty(n_out, dtype=np.int64)
    for j in range(n_out):
        hashes[j] = short[positions[j]]
    return positions[:n_out], firsts[:n_out], lasts[:n_out], hashes


@njit(cache=True, nogil=True)
def gather(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The byte strings ``data[start:end]`` end to end, and where each begins (one offset more than ranges)."""
    offsets = np.empty(len(starts) + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(len(starts)):
        offsets[i + 1] = offsets[i] + ends[i] - starts[i]
    out = np.empty(offsets[len(starts)], dtype=np.uint8)
    for i in range(len(starts)):
        at = offsets[i]
        for b in range(starts[i], ends[i]):
            out[at] = data[b]
            at += 1
    return out, offsets
