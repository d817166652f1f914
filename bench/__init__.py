"""The project's benchmarks, one module per bench, run as ``python -m bench NAME [args]`` (``--list`` lists them).

A module with a ``__main__`` block is a runnable entry: ``bench_<name>.py`` is the bench ``<name>``, the others
(corpus builders, the bench table) keep their module name. Shared code lives in ``harness.py`` (sessions, timing,
child processes, ``--baseline-rev`` loading, the JSON result) and the corpus modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent


def entries() -> dict[str, tuple[str, str]]:
    """Every runnable entry by name: (module name, first line of its docstring), read without importing it."""
    found = {}
    for path in sorted(HERE.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        if path.stem.startswith("_") or 'if __name__ == "__main__":' not in source:
            continue
        doc = ast.get_docstring(ast.parse(source)) or ""
        found[path.stem.removeprefix("bench_")] = (f"bench.{path.stem}", doc.strip().split("\n")[0])
    return found
