"""The sample run's outputs equal the ones recorded before the architecture refactor (issue #15).

``tests/golden/sample_run.json`` was written from ``main`` at ddf5454 (before any module moved) by
``python tests/e2e/test_golden_outputs.py RUN_DIR`` on the run of ``local_reference_run`` (conf/local.yaml,
small overrides). It holds sha256 of every file the trainer and the tokenizer user read, and a digest of
the sorted rows of every table, so Parquet metadata (Spark version, writer) does not matter.

Regenerate it only for a change that is meant to alter outputs, and say so in the commit message.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sample_run.json"
FILE_DIRS = ("megatron", "blend", "tokenizer")
TABLES = (
    "documents",
    "rejects",
    "filter/documents",
    "filter/dropped",
    "dedup/edges",
    "dedup/components",
    "dedup/survivors",
)


def _table_digest(path: Path) -> dict[str, object]:
    """Row count and sha256 of the table's rows, columns sorted by name and rows sorted, as JSON lines."""
    import pyarrow.parquet as pq

    files = sorted(p for p in path.rglob("*.parquet") if not p.name.startswith((".", "_")))
    rows: list[str] = []
    for file in files:
        table = pq.read_table(file)
        columns = sorted(table.column_names)
        for row in table.select(columns).to_pylist():
            rows.append(json.dumps(row, sort_keys=True, default=lambda v: v.hex() if isinstance(v, bytes) else str(v)))
    rows.sort()
    return {"rows": len(rows), "sha256": hashlib.sha256("\n".join(rows).encode()).hexdigest()}


def sample_run_fingerprint(run: Path) -> dict[str, object]:
    """What must not change across a refactor: file bytes under FILE_DIRS and the rows of TABLES."""
    files = {}
    for sub in FILE_DIRS:
        for path in sorted((run / sub).rglob("*")):
            if path.is_file():
                files[str(path.relative_to(run))] = hashlib.sha256(path.read_bytes()).hexdigest()
    tables = {name: _table_digest(run / name) for name in TABLES}
    return {"files": files, "tables": tables}


@pytest.mark.spark
def test_sample_run_outputs_equal_those_recorded_before_the_refactor(local_reference_run):
    expected = json.loads(GOLDEN.read_text())
    actual = sample_run_fingerprint(local_reference_run)
    assert sorted(actual["files"]) == sorted(expected["files"]), "the set of output files changed"
    changed = [name for name, digest in expected["files"].items() if actual["files"][name] != digest]
    assert not changed, f"these files differ from the recorded run: {changed}"
    assert actual["tables"] == expected["tables"]


if __name__ == "__main__":
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(sample_run_fingerprint(Path(sys.argv[1])), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
