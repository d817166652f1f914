"""Where the corpora live (``$PIPELINE_BENCH_DATA``, the shared fixtures), how one is written once, and the
builders' common options."""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Callable
from pathlib import Path

DATA = Path(os.environ.get("PIPELINE_BENCH_DATA", "/tmp/pipeline-bench"))
FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"  # ../shared: fixtures, peers


def built(path: Path, write: Callable[[Path], object]) -> Path:
    """``path`` if it exists, else written by ``write`` to ``<name>.partial`` and renamed (a failed write: nothing)."""
    if path.exists():
        return path
    partial = path.with_name(path.name + ".partial")
    remove = lambda: shutil.rmtree(partial) if partial.is_dir() else partial.unlink(missing_ok=True)  # noqa: E731
    remove()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write(partial)
    except BaseException:
        remove()
        raise
    partial.rename(path)
    return path


def arguments(doc: str | None, mb: float) -> argparse.ArgumentParser:
    """A builder's parser: ``--mb`` (default ``mb``) and ``--out``; the builder adds its own options."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=mb, help=f"MB of text (default {mb})")
    parser.add_argument("--out", type=Path, help="output file or directory (default under $PIPELINE_BENCH_DATA)")
    return parser
