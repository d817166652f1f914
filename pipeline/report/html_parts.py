"""Pieces of ``report.html`` every section uses: escaping, a scrollable table, differing words marked."""

from __future__ import annotations

import difflib
import html
import re
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


def highlight_differences(text: str, other: str) -> str:
    """``text`` escaped, with the words that are not in the aligned ``other`` wrapped in ``<mark>``."""
    words, others = re.split(r"(\s+)", text), re.split(r"(\s+)", other)
    out: list[str] = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, words, others, autojunk=False).get_opcodes():
        for word in words[i1:i2]:  # spaces stay unmarked, each differing word is marked
            out.append(esc(word) if tag == "equal" or not word.strip() else f"<mark>{esc(word)}</mark>")
    return "".join(out)
