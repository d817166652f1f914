"""The per-task zip re-read fix for Spark Python workers (pipeline.spark.speedups.zip_rescans, speed-up zip_rescans).

Run in a child interpreter: the fix patches ``zipimport`` process-wide."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.spark.speedups.zip_rescans import needs_fix
from tests.oracles import NOT_APPLICABLE

REPO = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent("""
    import importlib, os, sys, time, zipfile, zipimport
    from pipeline.spark.speedups.zip_rescans import skip_unchanged_zip_rescans

    archive = sys.argv[1]
    def write(names):
        with zipfile.ZipFile(archive, "w") as z:
            for name in names:
                z.writestr(f"{name}.py", f"NAME = {name!r}\\n")
    write(["first"])
    sys.path.insert(0, archive)
    import first

    reads = []
    real = zipimport._read_directory
    zipimport._read_directory = lambda path: reads.append(path) or real(path)

    importlib.invalidate_caches()          # like PySpark at the start of a task: unpatched, re-reads
    eager = len(reads)
    print("installed", skip_unchanged_zip_rescans(), skip_unchanged_zip_rescans())
    reads.clear()
    for _ in range(5):
        importlib.invalidate_caches()      # later tasks: the archive is unchanged
    print("unchanged_reads", len(reads), "eager", eager)

    time.sleep(0.01)
    write(["first", "second"])             # a rewritten archive must be read again
    reads.clear()
    importlib.invalidate_caches()
    import second
    print("rewritten_reads", len(reads), second.NAME)
""")


def run_child(tmp_path: Path) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "mods.zip")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return {line.split()[0]: line.split()[1:] for line in out.splitlines()}


def test_versions_with_the_eager_reread() -> None:
    assert [needs_fix(v) for v in ((3, 9), (3, 10), (3, 11), (3, 12), (3, 13))] == [False, True, True, False, False]


@pytest.mark.skipif(
    not needs_fix(),
    reason=f"{NOT_APPLICABLE}this CPython's zipimporter re-reads lazily already (3.12+) or never",
)
def test_unchanged_archive_is_not_reread_and_a_rewritten_one_is(tmp_path: Path) -> None:
    seen = run_child(tmp_path)
    assert seen["installed"] == ["True", "True"]
    assert int(seen["unchanged_reads"][2]) >= 1  # without the fix every invalidate_caches re-reads the zip
    assert seen["unchanged_reads"][0] == "0"
    assert seen["rewritten_reads"] == ["1", "second"]
