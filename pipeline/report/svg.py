"""Small inline SVG charts for ``report.html``: no plotting library, no script, they scale with the page.

Each chart is a ``<svg viewBox=...>`` that takes the width of its container (CSS ``width: 100%``), so
nothing runs off a narrow window. Tick labels are thinned so they never overlap.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 28, 48
COLORS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860")
MAX_X_LABELS = 10  # at most this many category labels; the others are left out (never overlapping)


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _nice_max(value: float) -> float:
    """A round upper bound for an axis (1, 2, 2.5 or 5 times a power of ten)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def _number(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1_000:
        return f"{value / 1_000:g}k"
    return f"{value:g}"


def _frame(
    title: str,
    body: list[str],
    xlabel: str,
    ylabel: str,
    legend: Sequence[tuple[str, str]] = (),
    legend_x: float = WIDTH - RIGHT - 150,
) -> str:
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{_esc(title)}" '
        'xmlns="http://www.w3.org/2000/svg">',
        f"<title>{_esc(title)}</title>",
        f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" class="title">{_esc(title)}</text>',
        *body,
    ]
    if xlabel:
        x = (LEFT + WIDTH - RIGHT) / 2
        parts.append(f'<text x="{x}" y="{HEIGHT - 6}" text-anchor="middle">{_esc(xlabel)}</text>')
    if ylabel:
        parts.append(
            f'<text transform="translate(12 {(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" '
            f'text-anchor="middle">{_esc(ylabel)}</text>'
        )
    for i, (name, color) in enumerate(legend):
        x, y = legend_x, TOP + 4 + 16 * i
        parts.append(
            f'<rect x="{x}" y="{y}" width="10" height="10" fill="{color}"/>'
            f'<text x="{x + 14}" y="{y + 9}">{_esc(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _y_axis(top_value: float, right_label: bool = False) -> list[str]:
    plot_h = HEIGHT - TOP - BOTTOM
    out = [f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}" class="axis"/>']
    for i in range(5):
        value = top_value * i / 4
        y = HEIGHT - BOTTOM - plot_h * i / 4
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_number(value)}</text>'
        )
    return out


def _x_labels(labels: Sequence[str], centers: Sequence[float]) -> list[str]:
    every = max(1, math.ceil(len(labels) / MAX_X_LABELS))
    return [
        f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{_esc(label)}</text>'
        for i, (label, x) in enumerate(zip(labels, centers, strict=True))
        if i % every == 0
    ]


def bar_chart(
    title: str, labels: Sequence[str], series: dict[str, Sequence[float]], xlabel: str = "", ylabel: str = ""
) -> str:
    """Grouped vertical bars: one group per label, one bar per series (with a legend when several)."""
    top = _nice_max(max((v for values in series.values() for v in values), default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    group = plot_w / max(len(labels), 1)
    bar = group * 0.8 / max(len(series), 1)
    body = _y_axis(top)
    for s, (name, values) in enumerate(series.items()):
        for i, value in enumerate(values):
            h = plot_h * value / top
            x = LEFT + group * i + group * 0.1 + bar * s
            body.append(
                f'<rect x="{x:.1f}" y="{HEIGHT - BOTTOM - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'fill="{COLORS[s % len(COLORS)]}"><title>{_esc(labels[i])}, {_esc(name)}: '
                f"{_esc(_number(value))}</title></rect>"
            )
    body += _x_labels(labels, [LEFT + group * (i + 0.5) for i in range(len(labels))])
    legend = [(n, COLORS[i % len(COLORS)]) for i, n in enumerate(series)] if len(series) > 1 else []
    return _frame(title, body, xlabel, ylabel, legend)


def s_curve_chart(
    points: Sequence[tuple[float, float]], threshold: float | None, bins: Sequence[int], bands: int, rows: int
) -> str:
    """The LSH S-curve P(candidate | Jaccard) with the threshold marked, over the histogram of the
    measured Jaccards of the candidate pairs (bars, scaled to their own maximum)."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    body = _y_axis(1.0)
    if bins and max(bins) > 0:
        width = plot_w / len(bins)
        for i, count in enumerate(bins):
            h = plot_h * count / max(bins)
            body.append(
                f'<rect x="{LEFT + width * i + 1:.1f}" y="{HEIGHT - BOTTOM - h:.1f}" width="{width - 2:.1f}" '
                f'height="{h:.1f}" fill="{COLORS[1]}" opacity="0.6"><title>Jaccard {i / len(bins):.2f}-'
                f"{(i + 1) / len(bins):.2f}: {count} candidate pairs</title></rect>"
            )
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{LEFT + plot_w * x:.1f},{HEIGHT - BOTTOM - plot_h * p:.1f}"
        for i, (x, p) in enumerate(points)
    )
    body.append(f'<path d="{path}" fill="none" stroke="{COLORS[0]}" stroke-width="2"/>')
    if threshold is not None:
        x = LEFT + plot_w * threshold
        body.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{HEIGHT - BOTTOM}" stroke="{COLORS[3]}" '
            f'stroke-dasharray="4 3"/><text x="{x + 4:.1f}" y="{TOP + 12}">threshold {threshold:g}</text>'
        )
    ticks = [i / 10 for i in range(11)]
    body += _x_labels([f"{t:.1f}" for t in ticks], [LEFT + plot_w * t for t in ticks])
    legend = [
        (f"P(candidate), b={bands} r={rows}", COLORS[0]),
        (f"candidate pairs measured (tallest bin: {max(bins, default=0)})", COLORS[1]),
    ]
    return _frame(
        "LSH S-curve and the candidate pairs' exact Jaccard",
        body,
        "Jaccard similarity",
        "P(candidate); pairs (scaled)",
        legend,
        legend_x=LEFT + 10,
    )


def timeline_chart(rows: Sequence[tuple[str, float, float]], title: str) -> str:
    """Horizontal bars ``(label, start, seconds)`` on a common time axis (seconds from the first start)."""
    end = _nice_max(max((s + d for _, s, d in rows), default=0))
    left = 130
    plot_w = WIDTH - left - RIGHT
    body = [f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" class="title">{_esc(title)}</text>']
    for i, (label, start, seconds) in enumerate(rows):
        y = TOP + 22 * i
        x, w = left + plot_w * start / end, max(plot_w * seconds / end, 1.0)
        body.append(
            f'<text x="{left - 6}" y="{y + 14}" text-anchor="end">{_esc(label)}</text>'
            f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="16" fill="{COLORS[i % len(COLORS)]}">'
            f"<title>{_esc(label)}: {seconds:.1f} s</title></rect>"
            f'<text x="{min(x + w + 4, WIDTH - RIGHT - 40):.1f}" y="{y + 15}">{seconds:.1f} s</text>'
        )
    axis_y = TOP + 22 * len(rows) + 4
    for i in range(5):
        x = left + plot_w * i / 4
        body.append(f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle">{_number(end * i / 4)} s</text>')
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {axis_y + 24}" role="img" aria-label="{_esc(title)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{_esc(title)}</title>{"".join(body)}</svg>'
    )


def _edge_label(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1_000 else _number(value)


def histogram_chart(
    title: str,
    edges: Sequence[float],
    series: dict[str, Sequence[int]],
    outside: tuple[int, int] = (0, 0),
    threshold: float | None = None,
    direction: str = "min",
) -> str:
    """Stacked bars of a histogram (one series per source) over bins of ``edges`` drawn equally wide, with
    ``outside`` = (underflow, overflow) as a bar at each end when not zero, and the threshold as a dashed
    line over a shaded failing side (``direction`` "min": values below it fail; "max": above it)."""
    under, over = outside
    slots = [("under", under)] * (under > 0) + [("bin", 0)] * (len(edges) - 1) + [("over", over)] * (over > 0)
    totals = [sum(values[i] for values in series.values()) for i in range(len(edges) - 1)]
    top = _nice_max(max([*totals, under, over], default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    width = plot_w / len(slots)
    first = LEFT + width * (under > 0)  # x of the first edge
    body = _y_axis(top)

    def x_of(value: float) -> float:  # a value's place on the bins' axis (inside a bin: linearly)
        if value <= edges[0]:
            return first
        if value >= edges[-1]:
            return first + width * (len(edges) - 1)
        i = max(k for k in range(len(edges) - 1) if edges[k] <= value)
        return first + width * (i + (value - edges[i]) / (edges[i + 1] - edges[i]))

    if threshold is not None:
        x = x_of(threshold)
        left, right = (LEFT, x) if direction == "min" else (x, WIDTH - RIGHT)
        body.append(
            f'<rect class="failing" x="{left:.1f}" y="{TOP}" width="{max(right - left, 0):.1f}" height="{plot_h}" '
            f'fill="{COLORS[3]}" opacity="0.08"/>'
        )
    for s, (name, values) in enumerate(series.items()):
        color = COLORS[s % len(COLORS)]
        below = [sum(v[i] for v in list(series.values())[:s]) for i in range(len(edges) - 1)]
        for i, count in enumerate(values):
            if count:
                h, base = plot_h * count / top, plot_h * below[i] / top
                body.append(
                    f'<rect x="{first + width * i + 0.5:.1f}" y="{HEIGHT - BOTTOM - base - h:.1f}" '
                    f'width="{max(width - 1, 0.5):.1f}" height="{h:.1f}" fill="{color}"><title>{_esc(name)}: '
                    f"{count:,} in [{_edge_label(edges[i])}, {_edge_label(edges[i + 1])})</title></rect>"
                )
    for kind, count, x in (("below", under, LEFT), ("above", over, first + width * (len(edges) - 1))):
        if count:
            h = plot_h * count / top
            body.append(
                f'<rect x="{x + 0.5:.1f}" y="{HEIGHT - BOTTOM - h:.1f}" width="{max(width - 1, 0.5):.1f}" '
                f'height="{h:.1f}" fill="#999"><title>{count:,} {kind} the range, all sources</title></rect>'
            )
    if threshold is not None:
        x = x_of(threshold)
        anchor, dx = ("start", 4) if x < LEFT + plot_w * 0.7 else ("end", -4)
        body.append(
            f'<line class="threshold" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{HEIGHT - BOTTOM}" '
            f'stroke="{COLORS[3]}" stroke-width="2" stroke-dasharray="4 3"/>'
            f'<text x="{x + dx:.1f}" y="{TOP + 12}" text-anchor="{anchor}">'
            f"{'min' if direction == 'min' else 'max'} {_edge_label(threshold)}</text>"
        )
    ticks = sorted({round(k * (len(edges) - 1) / 4) for k in range(5)})
    body += [
        f'<text x="{first + width * k:.1f}" y="{HEIGHT - BOTTOM + 16}" '
        f'text-anchor="{"end" if k == len(edges) - 1 else "middle"}">{_edge_label(edges[k])}</text>'
        for k in ticks
    ]
    legend = [(n, COLORS[i % len(COLORS)]) for i, n in enumerate(series)] if len(series) > 1 else []
    legend += [("outside the bins", "#999")] if under or over else []
    return _frame(title, body, "measured value", "documents", legend)
