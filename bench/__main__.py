"""``python -m bench NAME [args]``: run one bench (its own ``--help`` lists its options); ``--list`` lists them.

``--result PATH`` (before NAME): the bench's JSON result (bench/result.schema.json) goes there.
"""

from __future__ import annotations

import argparse
import ast
import os
import runpy
import sys

from bench.harness import REPO, RESULT_VAR, arguments

PACKAGES = {"bench": ("bench_", ""), "corpora": ("", "_corpus")}  # an entry's name: the module's, less, plus these


def entries() -> dict[str, tuple[str, str]]:
    """Every runnable module of bench/ and corpora/ by name: (module, its docstring's first line), read without
    importing it."""
    found = {}
    for package, (prefix, suffix) in PACKAGES.items():
        for path in sorted((REPO / package).glob("*.py")):
            source = path.read_text(encoding="utf-8")
            if path.stem.startswith("_") or 'if __name__ == "__main__":' not in source:
                continue
            doc = ast.get_docstring(ast.parse(source)) or ""
            found[path.stem.removeprefix(prefix) + suffix] = (f"{package}.{path.stem}", doc.strip().split("\n")[0])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__.split("\n")[0], list=False)
    parser.prog = "python -m bench"
    parser.add_argument("--result", metavar="PATH", help="write the bench's JSON result here")
    parser.add_argument("name", nargs="?", help="the bench (see --list)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the bench's own arguments")
    args = parser.parse_args(argv)
    known = entries()
    if args.list:
        width = max(map(len, known))
        for name, (_, doc) in known.items():
            print(f"{name:{width}}  {doc}")
        return 0
    if args.name not in known:
        parser.error(f"{'unknown bench ' + repr(args.name) if args.name else 'name a bench'} (--list lists them)")
    if args.result:
        os.environ[RESULT_VAR] = os.path.abspath(args.result)
    module = known[args.name][0]
    sys.argv = [f"python -m bench {args.name}", *args.args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
