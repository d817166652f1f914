"""Pieces of ``report.html`` every section uses: escaping and a scrollable table."""

from __future__ import annotations

import html
from typing import Any


def esc(value: object) -> str:
    """``value`` as HTML text (quotes escaped too)."""
    return html.escape(str(value), quote=True)


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A table in a horizontally scrolling box (numbers right-aligned, integers with thousands separators)."""

    def cell(value: Any) -> str:
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        return (
            f'<td class="n">{esc(f"{value:,}" if isinstance(value, int) else value)}</td>'
            if numeric
            else f"<td>{esc(value)}</td>"
        )

    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(cell(c) for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table><tr>{head}</tr>{body}</table></div>'
