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
SMALL_GROUP = 8  # groups of at most this many rows are decided pair by pair (_small_group), larger ones sorted
SMALL_BYTES_GROUP = 32  # ... with the bytes tokenizer, by intervals (_small_group_bytes): cheaper per pair


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
def _row_extent(
    data: np.ndarray, offsets: np.ndarray, anchor: np.ndarray, head: int, jx: int, jy: int
) -> tuple[int, int]:
    """:func:`_extent` of the contexts of the group's rows ``jx`` and ``jy`` (rows ``head + jx``, ``head + jy``),
    aligned at their anchors."""
    x_at, y_at = offsets[head + jx], offsets[head + jy]
    x_len, y_len = offsets[head + jx + 1] - x_at, offsets[head + jy + 1] - y_at
    return _extent(
        data,
        x_at + anchor[jx],
        y_at + anchor[jy],
        min(anchor[jx], anchor[jy]),
        min(x_len - anchor[jx], y_len - anchor[jy]),
    )


@njit(cache=True, nogil=True)
def _small_group(
    data: np.ndarray,
    offsets: np.ndarray,
    head: int,
    n: int,
    positions: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    woff: np.ndarray,
    ws: np.ndarray,
    we: np.ndarray,
    anchor: np.ndarray,
    item_offset: np.ndarray,
    pair_left: np.ndarray,
    pair_right: np.ndarray,
    kept: np.ndarray,
    copies: np.ndarray,
) -> None:
    """One group of ``n`` rows decided pair by pair, with no hashing or sorting: each pair's contexts compared
    once around their anchors, then each window of a row against the window at the same offset of every other
    row. Sets ``kept`` (the first equal window: the lowest row's) and ``copies`` (how many are equal) as
    :func:`_sorted_group` sets them."""
    for a in range(n):
        for b in range(a + 1, n):
            pair_left[a, b], pair_right[a, b] = _row_extent(data, offsets, anchor, head, a, b)
            pair_left[b, a], pair_right[b, a] = pair_left[a, b], pair_right[a, b]
    for b in range(n):
        for y in range(woff[b], woff[b + 1]):
            y_from, y_to = ws[y] - anchor[b], we[y] - anchor[b]
            first = -1
            count = 1
            for a in range(n):
                if a == b:
                    continue
                rx = head + a
                i = positions[rx] - lows[rx] - item_offset[y]  # a's window at the same offset from its anchor
                if i < 0 or i > highs[rx] - lows[rx]:
                    continue
                x = woff[a] + i
                if ws[x] - anchor[a] != y_from or we[x] - anchor[a] != y_to:
                    continue
                if -y_from <= pair_left[a, b] and y_to <= pair_right[a, b]:
                    count += 1
                    if first < 0 and a < b:
                        first = x
            kept[y] = first if first >= 0 else y
            copies[y] = count


@njit(cache=True, nogil=True, inline="always")
def _append_run(  # noqa: PLR0913
    out: np.ndarray, n_out: int, doc: int, start: int, end: int, copies: int, kept_doc: int, kept_start: int
) -> tuple[np.ndarray, int]:
    """``out`` (6 x capacity, doubled when full) with one more run in column ``n_out``; the new count."""
    if n_out == out.shape[1]:
        grown = np.empty((6, 2 * n_out), dtype=np.int64)
        grown[:, :n_out] = out[:, :n_out]
        out = grown
    out[0, n_out] = doc
    out[1, n_out] = start
    out[2, n_out] = end
    out[3, n_out] = copies
    out[4, n_out] = kept_doc
    out[5, n_out] = kept_start
    return out, n_out + 1


@njit(cache=True, nogil=True)
def _small_group_bytes(
    data: np.ndarray,
    offsets: np.ndarray,
    head: int,
    n: int,
    positions: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    k: int,
    anchor: np.ndarray,
    pair_left: np.ndarray,
    pair_right: np.ndarray,
    first: np.ndarray,
    last: np.ndarray,
    out: np.ndarray,
    n_out: int,
) -> tuple[np.ndarray, int]:
    """:func:`_small_group` with the ``bytes`` tokenizer, by intervals rather than window by window: the windows
    of row ``b`` equal to row ``a``'s at the same offset from the anchor are one interval of ``b``'s windows (those
    inside both rows' windows and inside the pair's common extension), so ``b``'s removed windows are the union of
    the intervals of the rows before it, each run one piece of that union, its copies and kept copy those of its
    first window. The runs are appended to ``out`` (grown when full) as repeated_windows_many writes them; returns
    ``out`` and the runs in it."""
    for j in range(n):
        anchor[j] = positions[head + j] - lows[head + j]
    for a in range(n):
        for b in range(a + 1, n):
            pair_left[a, b], pair_right[a, b] = _row_extent(data, offsets, anchor, head, a, b)
            pair_left[b, a], pair_right[b, a] = pair_left[a, b], pair_right[a, b]
    for b in range(n):
        rb = head + b
        count_b = highs[rb] - lows[rb] + 1
        for a in range(n):  # b's windows equal to a's: [first[a], last[a]] (empty when first > last)
            if a == b:
                first[a], last[a] = 1, 0
                continue
            ra = head + a
            first[a] = max(anchor[b] - pair_left[a, b], anchor[b] - anchor[a], 0)
            last[a] = min(pair_right[a, b] + anchor[b] - k, highs[ra] - lows[ra] + anchor[b] - anchor[a], count_b - 1)
        at = 0  # the next window of b not yet in a run
        while True:
            start = count_b  # the first removed window from ``at`` on: the least interval start of a row before b
            for a in range(b):
                if first[a] <= last[a] and last[a] >= at:
                    start = min(start, max(first[a], at))
            if start >= count_b:
                break
            end = start  # grown while a row before b's interval reaches on
            grown = True
            while grown:
                grown = False
                for a in range(b):
                    if first[a] <= last[a] and first[a] <= end + 1 and last[a] > end:
                        end = last[a]
                        grown = True
            copies, kept = 1, -1
            for a in range(n):
                if first[a] <= start <= last[a]:
                    copies += 1
                    if kept < 0 and a < b:
                        kept = a
            out, n_out = _append_run(
                out, n_out, rb, start, end + k, copies, head + kept, start - anchor[b] + anchor[kept]
            )  # fmt: skip
            at = end + 1
    return out, n_out


@njit(cache=True, nogil=True)
def _group_windows(
    data: np.ndarray,
    offsets: np.ndarray,
    head: int,
    n: int,
    positions: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    k: int,
    words: bool,
    woff: np.ndarray,
    ws: np.ndarray,
    we: np.ndarray,
    anchor: np.ndarray,
    item_offset: np.ndarray,
    item_row: np.ndarray,
    ts: np.ndarray,
    te: np.ndarray,
) -> None:
    """The windows of the group's rows ``head`` to ``head + n - 1`` into the scratch arrays: where each row's
    windows begin (``woff``), each window's byte range inside its row's context (``ws``, ``we``), its anchor
    position minus its own (``item_offset``) and row (``item_row``, in the group), and each row's anchor's first
    byte inside its context (``anchor``)."""
    woff[0] = 0
    for j in range(n):
        r = head + j
        count = highs[r] - lows[r] + 1
        at = woff[j]
        woff[j + 1] = at + count
        for i in range(count):
            item_offset[at + i] = positions[r] - lows[r] - i
            item_row[at + i] = j
        if not words:
            anchor[j] = positions[r] - lows[r]
            for i in range(count):
                ws[at + i] = i
                we[at + i] = i + k
            continue
        base = offsets[r]
        length = offsets[r + 1] - base
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
            ws[at + i] = ts[i]
            we[at + i] = te[i + k - 1]


@njit(cache=True, nogil=True)
def _sorted_group(
    data: np.ndarray,
    offsets: np.ndarray,
    head: int,
    n: int,
    woff: np.ndarray,
    ws: np.ndarray,
    we: np.ndarray,
    anchor: np.ndarray,
    item_offset: np.ndarray,
    item_row: np.ndarray,
    multiplier: np.uint64,
    powers: np.ndarray,
    prefix: np.ndarray,
    hashes: np.ndarray,
    scratch: np.ndarray,
    kept: np.ndarray,
    copies: np.ndarray,
    weight: np.ndarray,
) -> None:
    """One group's windows keyed by (offset from the anchor, 64-bit hash of the bytes) and sorted stably (rows stay
    in order); each run of one key split into classes of equal bytes by comparing the contexts around their
    anchors. Sets ``kept`` (the class's first window) and ``copies`` (the class's size, each window counting as
    many as its row's ``weight``: the rows it stands for)."""
    n_items = woff[n]
    reps, counts, cls = scratch[0], scratch[1], scratch[2]
    cached, left, right = scratch[3], scratch[4], scratch[5]  # per row: the row its extension was taken with
    for j in range(n):
        cached[j] = -1
        base = offsets[head + j]
        prefix[0] = np.uint64(0)
        for b in range(offsets[head + j + 1] - base):
            prefix[b + 1] = prefix[b] * multiplier + np.uint64(data[base + b]) + np.uint64(1)
        for item in range(woff[j], woff[j + 1]):
            s, e = ws[item], we[item]
            hashes[item] = prefix[e] - prefix[s] * powers[e - s]
    order = np.argsort(hashes[:n_items], kind="mergesort")
    order = order[np.argsort(item_offset[:n_items][order], kind="mergesort")]
    a = 0
    while a < n_items:
        b = a + 1
        while b < n_items and hashes[order[b]] == hashes[order[a]] and item_offset[order[b]] == item_offset[order[a]]:
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
                    left[jx], right[jx] = _row_extent(data, offsets, anchor, head, jx, jy)
                if -x_from <= left[jx] and we[x] - anchor[jx] <= right[jx]:
                    found = q
                    break
            if found < 0:
                reps[n_reps] = x
                counts[n_reps] = 0
                found = n_reps
                n_reps += 1
            counts[found] += weight[jx]
            cls[c - a] = found
        for c in range(a, b):
            kept[order[c]] = reps[cls[c - a]]
            copies[order[c]] = counts[cls[c - a]]
        a = b


@njit(cache=True, nogil=True)
def _twins(
    data: np.ndarray,
    offsets: np.ndarray,
    head: int,
    n: int,
    positions: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    multiplier: np.uint64,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The group's rows ``head`` to ``head + n - 1`` that are twins of an earlier one (the same context bytes, anchor
    offset and windows: the same windows, so every window of a twin is a later copy of its first twin's): each
    row's first twin (``leader``, itself when none is earlier), the first twins in order (``firsts``) with the rows
    each stands for (``weight``), and their contexts, positions and windows copied into a sub-table (data,
    offsets, positions, lows, highs) that the group's kernels read as a group of ``len(firsts)`` rows. Rows are
    keyed by a hash of their bytes (``multiplier``: the window hash's base; 0 makes keys collide) and confirmed on
    the bytes."""
    keys = np.empty(n, dtype=np.uint64)
    for j in range(n):
        r = head + j
        h = np.uint64(positions[r] - lows[r]) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(highs[r] - lows[r])
        for b in range(offsets[r], offsets[r + 1]):
            h = h * multiplier + np.uint64(data[b]) + np.uint64(1)
        keys[j] = h
    order = np.argsort(keys, kind="mergesort")  # stable: each key's rows stay in order, the first twin first
    leader = np.empty(n, dtype=np.int64)
    a = 0
    while a < n:
        b = a + 1
        while b < n and keys[order[b]] == keys[order[a]]:
            b += 1
        for c in range(a, b):
            x = head + order[c]
            leader[order[c]] = order[c]
            for d in range(a, c):  # an earlier row of this key that is its own first twin and equal to x
                y = order[d]
                if leader[y] != y:
                    continue
                ry = head + y
                if (
                    positions[ry] - lows[ry] != positions[x] - lows[x]
                    or highs[ry] - lows[ry] != highs[x] - lows[x]
                    or offsets[ry + 1] - offsets[ry] != offsets[x + 1] - offsets[x]
                ):
                    continue
                same = True
                for i in range(offsets[x + 1] - offsets[x]):
                    if data[offsets[x] + i] != data[offsets[ry] + i]:
                        same = False
                        break
                if same:
                    leader[order[c]] = y
                    break
        a = b
    u = 0
    size = 0
    for j in range(n):
        if leader[j] == j:
            u += 1
            size += offsets[head + j + 1] - offsets[head + j]
    firsts = np.empty(u, dtype=np.int64)
    weight = np.zeros(u, dtype=np.int64)
    sub_data = np.empty(size, dtype=np.uint8)
    sub_offsets = np.empty(u + 1, dtype=np.int64)
    sub_positions = np.empty(u, dtype=np.int64)
    sub_lows = np.empty(u, dtype=np.int64)
    sub_highs = np.empty(u, dtype=np.int64)
    index = np.empty(n, dtype=np.int64)  # a first twin's place in firsts
    sub_offsets[0] = 0
    t = 0
    for j in range(n):
        if leader[j] != j:
            continue
        r = head + j
        firsts[t] = j
        index[j] = t
        length = offsets[r + 1] - offsets[r]
        sub_data[sub_offsets[t] : sub_offsets[t] + length] = data[offsets[r] : offsets[r + 1]]
        sub_offsets[t + 1] = sub_offsets[t] + length
        sub_positions[t], sub_lows[t], sub_highs[t] = positions[r], lows[r], highs[r]
        t += 1
    for j in range(n):
        weight[index[leader[j]]] += 1
        leader[j] = index[leader[j]]  # from here on: the place in firsts of the row's first twin
    return leader, firsts, weight, sub_data, sub_offsets, sub_positions, sub_lows, sub_highs


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
    small: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The groups of rows ``[heads[g], heads[g] + sizes[g])`` (each ordered by doc_id, position; row ``r``'s
    context is ``data[offsets[r]:offsets[r + 1]]``) -> the runs of removed windows, as
    :func:`pipeline.spans.exact.repeated_windows` gives them, with rows numbered in the whole table: row, first
    byte, end byte, copies, kept row, kept window's first byte (bytes inside the row's context). ``multiplier``: the
    window hash's base (:data:`BASE`); groups of at most ``small`` rows are decided pair by pair
    (:data:`SMALL_GROUP`; with bytes, :data:`SMALL_BYTES_GROUP`, by intervals), larger ones sorted. One group at a
    time: the scratch arrays hold the largest group."""
    most_items, most_rows, longest = 1, 1, 1
    for g in range(len(heads)):
        items = 0
        for r in range(heads[g], heads[g] + sizes[g]):
            items += highs[r] - lows[r] + 1
            longest = max(longest, offsets[r + 1] - offsets[r])
        most_items = max(most_items, items)
        most_rows = max(most_rows, sizes[g])
    powers = np.empty(longest + 1, dtype=np.uint64)
    powers[0] = np.uint64(1)
    for i in range(1, longest + 1):
        powers[i] = powers[i - 1] * multiplier
    prefix = np.empty(longest + 1, dtype=np.uint64)
    ts = np.empty(longest + 1, dtype=np.int64)
    te = np.empty(longest + 1, dtype=np.int64)
    woff = np.empty(most_rows + 1, dtype=np.int64)
    anchor = np.empty(most_rows, dtype=np.int64)
    ws = np.empty(most_items, dtype=np.int64)
    we = np.empty(most_items, dtype=np.int64)
    item_offset = np.empty(most_items, dtype=np.int64)
    item_row = np.empty(most_items, dtype=np.int64)
    hashes = np.empty(most_items, dtype=np.uint64)
    kept = np.empty(most_items, dtype=np.int64)
    copies = np.empty(most_items, dtype=np.int64)
    scratch = np.empty((6, most_items), dtype=np.int64)
    pairs = max(1, min(small, most_rows))
    pair_left = np.empty((pairs, pairs), dtype=np.int64)
    pair_right = np.empty((pairs, pairs), dtype=np.int64)
    out = np.empty((6, 1024), dtype=np.int64)  # row, start, end, copies, kept row, kept window's first byte
    n_out = 0
    first = np.empty(max(1, min(small, most_rows)), dtype=np.int64)
    last = np.empty(max(1, min(small, most_rows)), dtype=np.int64)
    for g in range(len(heads)):
        head, n = heads[g], sizes[g]
        if n <= small and not words:
            out, n_out = _small_group_bytes(
                data, offsets, head, n, positions, lows, highs, k, anchor, pair_left, pair_right, first, last, out,
                n_out,
            )  # fmt: skip
            continue
        if n <= small:
            _group_windows(
                data, offsets, head, n, positions, lows, highs, k, words, woff, ws, we, anchor, item_offset, item_row,
                ts, te,
            )  # fmt: skip
            _small_group(
                data, offsets, head, n, positions, lows, highs, woff, ws, we, anchor, item_offset, pair_left,
                pair_right, kept, copies,
            )  # fmt: skip
        else:  # twins decided once, through their first copy: large groups are mostly copies of whole contexts
            leader, firsts, weight, sub_data, sub_offsets, sub_positions, sub_lows, sub_highs = _twins(
                data, offsets, head, n, positions, lows, highs, multiplier
            )
            u = len(firsts)
            _group_windows(
                sub_data, sub_offsets, 0, u, sub_positions, sub_lows, sub_highs, k, words, woff, ws, we, anchor,
                item_offset, item_row, ts, te,
            )  # fmt: skip
            _sorted_group(
                sub_data, sub_offsets, 0, u, woff, ws, we, anchor, item_offset, item_row, multiplier, powers, prefix,
                hashes, scratch, kept, copies, weight,
            )  # fmt: skip
            for j in range(n):
                t = leader[j]
                f = woff[t]
                if firsts[t] != j:  # a later twin: every window removed, one run, its first window's copies
                    out, n_out = _append_run(
                        out, n_out, head + j, ws[f], we[woff[t + 1] - 1],
                        copies[f], head + firsts[item_row[kept[f]]], ws[kept[f]],
                    )  # fmt: skip
                    continue
                open_run = False
                for item in range(f, woff[t + 1]):
                    if kept[item] == item:
                        open_run = False
                        continue
                    if open_run:
                        out[2, n_out - 1] = we[item]
                        continue
                    out, n_out = _append_run(
                        out, n_out, head + j, ws[item], we[item],
                        copies[item], head + firsts[item_row[kept[item]]], ws[kept[item]],
                    )  # fmt: skip
                    open_run = True
            continue
        for j in range(n):
            open_run = False
            for item in range(woff[j], woff[j + 1]):
                if kept[item] == item:
                    open_run = False
                    continue
                if open_run:
                    out[2, n_out - 1] = we[item]
                    continue
                out, n_out = _append_run(
                    out, n_out, head + j, ws[item], we[item], copies[item], head + item_row[kept[item]], ws[kept[item]]
                )
                open_run = True
    return (
        out[0, :n_out].copy(),
        out[1, :n_out].copy(),
        out[2, :n_out].copy(),
        out[3, :n_out].copy(),
        out[4, :n_out].copy(),
        out[5, :n_out].copy(),
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


@njit(cache=True, nogil=True)
def group_order(order: np.ndarray, hashes: np.ndarray, doc_ids: np.ndarray, positions: np.ndarray) -> None:
    """``order``, rows ordered by hash (``np.argsort(hashes)``), reordered in place by (hash, doc_id, position), as
    ``np.lexsort((positions, doc_ids, hashes))`` orders them (no two rows share all three): each run of one hash
    sorted by (doc_id, position), by insertion when short (most anchor groups are), else by two stable sorts."""
    n = len(order)
    a = 0
    while a < n:
        b = a + 1
        while b < n and hashes[order[b]] == hashes[order[a]]:
            b += 1
        if b - a <= 16:
            for i in range(a + 1, b):
                x = order[i]
                j = i - 1
                while j >= a and (
                    doc_ids[order[j]] > doc_ids[x]
                    or (doc_ids[order[j]] == doc_ids[x] and positions[order[j]] > positions[x])
                ):
                    order[j + 1] = order[j]
                    j -= 1
                order[j + 1] = x
        else:
            run = order[a:b].copy()
            run = run[np.argsort(positions[run], kind="mergesort")]
            run = run[np.argsort(doc_ids[run], kind="mergesort")]
            order[a:b] = run
        a = b


@njit(cache=True, nogil=True)
def byte_anchor_ranges(
    data: np.ndarray, doc_offsets: np.ndarray, values: np.ndarray, k: int, m: int, base: np.uint64, mix: np.uint64
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`anchor_ranges` of every document ``data[doc_offsets[d]:doc_offsets[d + 1]]`` with the ``bytes``
    tokenizer, each byte's token value looked up in ``values`` (exact.token_hashes' ``_BYTE_VALUES``) here rather
    than in an array eight times the text: each anchor's document index, then its position, first and last
    window (in the document) and hash, documents in order."""
    capacity = 1024
    out = np.empty((4, capacity), dtype=np.int64)
    docs = np.empty(capacity, dtype=np.int64)
    n_out = 0
    top = np.uint64(1)
    for _ in range(m - 1):
        top = top * base
    w = k - m + 1
    longest = 0
    for d in range(len(doc_offsets) - 1):
        longest = max(longest, doc_offsets[d + 1] - doc_offsets[d])
    short = np.empty(max(longest - m + 1, 1), dtype=np.int64)
    queue = np.empty(max(longest - m + 1, 1), dtype=np.int64)
    prefix = np.empty(max(longest - m + 1, 1), dtype=np.int64)
    for d in range(len(doc_offsets) - 1):
        at = doc_offsets[d]
        n = doc_offsets[d + 1] - at
        if n - k + 1 <= 0:
            continue
        h = np.uint64(0)
        for j in range(m):
            h = h * base + values[data[at + j]]
        for i in range(n - m + 1):
            if i > 0:
                h = (h - values[data[at + i - 1]] * top) * base + values[data[at + i + m - 1]]
            x = h ^ (h >> np.uint64(31))
            x = x * mix
            short[i] = np.int64(x ^ (x >> np.uint64(29)))
        short_n = n - m + 1
        # the least of each w consecutive hashes (the first on a tie), by blocks of w: the least from each place to
        # its block's end (``queue``) and from its block's start to it (``prefix``), no data-dependent branch
        for block in range(0, short_n, w):
            end = min(block + w, short_n)
            best = end - 1
            for j in range(end - 1, block - 1, -1):
                if short[j] <= short[best]:
                    best = j
                queue[j] = best
            best = block
            for j in range(block, end):
                if short[j] < short[best]:
                    best = j
                prefix[j] = best
        first_out = n_out
        inside = 0  # q's place in its block (q % w, counted rather than divided)
        for q in range(n - k + 1):  # the window of k tokens whose m-windows are q to q + w - 1
            chosen = queue[q]
            right = prefix[q + w - 1]
            if inside != 0 and short[right] < short[chosen]:
                chosen = right
            inside += 1
            if inside == w:
                inside = 0
            if n_out > first_out and out[0, n_out - 1] == chosen:
                out[2, n_out - 1] = q
                continue
            if n_out == capacity:
                capacity *= 2
                grown = np.empty((4, capacity), dtype=np.int64)
                grown[:, :n_out] = out[:, :n_out]
                out = grown
                grown_docs = np.empty(capacity, dtype=np.int64)
                grown_docs[:n_out] = docs[:n_out]
                docs = grown_docs
            out[0, n_out] = chosen
            out[1, n_out] = q
            out[2, n_out] = q
            out[3, n_out] = short[chosen]
            docs[n_out] = d
            n_out += 1
    found = out[:, :n_out].copy()
    return docs[:n_out].copy(), found[0], found[1], found[2], found[3]


@njit(cache=True, nogil=True)
def scatter(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`gather` of the ranges in ``order`` (``gather(data, starts[order], ends[order])``), copied in the ranges'
    own order instead: ranges listed as they lie in ``data`` are read from it front to back, each written to
    its place, which is far faster than reading them in another order when ``data`` is far larger than a
    cache."""
    n = len(order)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    place = np.empty(n, dtype=np.int64)
    for i in range(n):
        r = order[i]
        place[r] = offsets[i]
        offsets[i + 1] = offsets[i] + ends[r] - starts[r]
    out = np.empty(offsets[n], dtype=np.uint8)
    for r in range(n):
        at = place[r]
        for b in range(starts[r], ends[r]):
            out[at] = data[b]
            at += 1
    return out, offsets
