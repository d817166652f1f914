"""report.json's ``spans.most_repeated`` ranges (pipeline.spans.report_section.top_ranges) against a plain-Python
oracle written from their definition, on a ``spans/removed`` table of several files with ties everywhere; and read in
passes that each hold a bounded share of the ranges (a large run's report no longer holds a Python row per range)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.spans import report_section
from pipeline.stage_api import layout

SCHEMA = pa.schema(
    [("doc_id", pa.int64()), ("source", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
     ("kind", pa.string()), ("copies", pa.int64()), ("kept_doc_id", pa.int64()), ("kept_start", pa.int64())]
)  # fmt: skip
FIELDS = ("doc_id", "start", "end", "copies", "kept_doc_id", "kept_start", "kind")


def _rows(seed: int, n: int) -> list[dict[str, Any]]:
    """Ranges with few distinct kept copies, lengths, copies and doc_ids, so every tie-break is exercised."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        start = rng.randrange(0, 40)
        rows.append(
            {
                "doc_id": rng.randrange(0, 30),
                "source": rng.choice(["web", "code"]),
                "start": start,
                "end": start + rng.randrange(1, 6),
                "kind": rng.choice(["lines", "sentences", "exact_substring"]),
                "copies": rng.randrange(2, 6),
                "kept_doc_id": rng.randrange(0, 12),
                "kept_start": rng.randrange(0, 6),
            }
        )
    return rows


def _write(run: Path, rows: list[dict[str, Any]], files: int) -> None:
    """``rows`` into ``files`` parquet files of ``spans/removed`` (file name order = row order), small row groups."""
    table_dir = run / layout.SPANS_REMOVED
    table_dir.mkdir(parents=True)
    size = -(-len(rows) // files)
    for i in range(files):
        part = rows[i * size : (i + 1) * size]
        pq.write_table(pa.Table.from_pylist(part, SCHEMA), table_dir / f"part-{i:05d}.parquet", row_group_size=37)


def _oracle(rows: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    """Per kept copy (kind, kept_doc_id, kept_start) the first of its longest ranges; kept copies in the order first
    seen, then stably by most copies, longest range, smallest doc_id; the first ``top``."""
    first: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        key = (row["kind"], row["kept_doc_id"], row["kept_start"])
        if key not in first or row["end"] - row["start"] > first[key]["end"] - first[key]["start"]:
            first[key] = row
    ranked = sorted(first.values(), key=lambda r: (-r["copies"], -(r["end"] - r["start"]), r["doc_id"]))
    return [{k: r[k] for k in FIELDS} for r in ranked[:top]]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("rows_per_pass", [10**6, 97, 13])
@pytest.mark.parametrize("top", [1, 10, 10**4])
def test_the_most_repeated_ranges_are_the_oracle_s_in_any_number_of_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, rows_per_pass: int, top: int
) -> None:
    rows = _rows(seed, 900)
    _write(tmp_path, rows, files=4)
    monkeypatch.setattr(report_section, "ROWS_PER_PASS", rows_per_pass)
    got = report_section.top_ranges(str(tmp_path), top)
    assert [{k: r[k] for k in FIELDS} for r in got] == _oracle(rows, top)


def test_an_empty_table_has_no_ranges(tmp_path: Path) -> None:
    _write(tmp_path, [], files=1)
    assert report_section.top_ranges(str(tmp_path), 10) == []


def test_each_pass_holds_a_share_of_the_ranges_and_no_python_row_per_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old report built a Python dict per range and per kept copy (memory growing with the run): the ranges
    are now grouped pass by pass, each pass a share of them, none turned into Python rows."""
    rows = _rows(7, 2000)
    _write(tmp_path, rows, files=3)
    monkeypatch.setattr(report_section, "ROWS_PER_PASS", 250)
    held: list[int] = []
    part_top = report_section._part_top

    def spy(part, top, kinds):
        held.append(len(part["order"]))
        return part_top(part, top, kinds)

    def no_rows(*_args, **_kwargs):
        raise AssertionError("spans/removed read as Python rows")

    monkeypatch.setattr(report_section, "_part_top", spy)
    monkeypatch.setattr(report_section, "iter_rows", no_rows, raising=False)
    got = report_section.top_ranges(str(tmp_path), 10)
    assert [{k: r[k] for k in FIELDS} for r in got] == _oracle(rows, 10)
    assert len(held) == 8 and sum(held) == len(rows)  # every range in exactly one pass
    assert max(held) < len(rows) / 4  # each pass a share, not the table
