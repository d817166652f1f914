"""The bench table's figures (docs/benchmarks.md): shown from a bench's JSON result; the rows as markdown."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

HEADER = ("bench", "command", "what it measures", "cold", "steady", "commit", "load (before-after)", "wall / CPU s")


class FigureSpec(Protocol):
    """What :func:`extract` reads of a figure (bench/readme_entries.py, Figure)."""

    @property
    def label(self) -> str: ...
    @property
    def show(self) -> Callable[[Mapping[str, float]], str]: ...


def values_of(path: Path) -> dict[str, float] | None:
    """The figures of a bench's JSON result as name -> value; None when the bench wrote none."""
    if not path.is_file():
        return None
    return {name: figure["value"] for name, figure in json.loads(path.read_text())["figures"].items()}


def extract(figures: Iterable[FigureSpec], values: Mapping[str, float] | None) -> str:
    """Each figure shown as ``label text``, figures joined by ``"; "``; ones the result lacks say so."""
    if values is None:
        return "no JSON result"
    parts = []
    for figure in figures:
        try:
            parts.append(f"{figure.label} {figure.show(values)}")
        except (KeyError, ZeroDivisionError):
            parts.append(f"{figure.label}: not found")
    return "; ".join(parts)


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _per_run(row: dict[str, Any], key: str) -> str:
    runs = row.get("runs") or {}
    if key == "load":
        shown = {k: f"{r['load'][0]:g}-{r['load'][1]:g}" for k, r in runs.items()}
    else:
        shown = {k: f"{r['wall_s']:g} / {r['cpu_s']:g}" for k, r in runs.items()}
    if len(shown) == 1:
        return next(iter(shown.values()))
    return ", ".join(f"{k} {v}" for k, v in shown.items())


def row_cells(row: dict[str, Any]) -> list[str]:
    """One table row: cold and steady figures, or why there are none."""
    runs = row.get("runs") or {}
    status = row.get("status", "ok")
    cold = row.get("cold") or ("n/a (runs once)" if runs else "")
    steady = row.get("steady") or ""
    if status != "ok":
        steady = f"{status}; {steady}" if steady else status
    return [
        row["name"],
        f"`{row['command']}`",
        row["what"],
        cold,
        steady,
        row["commit"],
        _per_run(row, "load"),
        _per_run(row, "wall"),
    ]


def render(table: dict[str, Any]) -> str:
    """The markdown table of a run (bench/readme_table.py's table.json)."""
    kind = " (--quick: smoke-check sizes, not figures to publish)" if table.get("quick") else ""
    lines = [
        f"Measured at commit {table['commit']} on {table.get('cpus', '?')} CPUs, {table.get('started', '?')} to "
        f"{table.get('finished', 'unfinished')}{kind}; cold = empty numba cache and no JVM class-data archive, "
        "steady = the run after it (one run when cold means nothing there: the bench warms up itself).",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    for row in table["rows"]:
        lines.append("| " + " | ".join(_cell(c) for c in row_cells(row)) + " |")
    return "\n".join(lines)
