"""The files a filter reads are part of the filter stage's fingerprint by content (issue 46 item 1; docs/stages.md,
The filter stage): editing the C4 bad-words list between two runs is not reused; recomputed, the stage's output is
a fresh run's. And documents a filter empties are accounted for as ``<filter>.empty`` (item 2) on Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from pipeline.config import load_config_text
from pipeline.run.runner import StageError, run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.config_texts import config_text

pytestmark = pytest.mark.spark
LINES = ("The {} animal walks across the field today.", "It stops near the old stone wall.", "Then it goes home.")
ANIMALS = ("fox", "cat", "dog", "owl")


def _corpus(tmp_path: Path) -> Path:
    """40 documents C4 keeps by default (six punctuated lines each), a quarter naming a fox, and 4 that are only
    an e-mail address."""
    path = tmp_path / "docs.jsonl"
    lines = [[LINES[0].format(ANIMALS[i % 4]), *LINES[1:]] for i in range(40)]
    texts = ["\n".join([*lines[i], *lines[i], f"Number {i}."]) for i in range(40)]
    texts += [f"writer{i}@example.org" for i in range(4)]
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    return path


def _context(spark, data: Path, words: Path, out: Path) -> RunContext:
    filters = f'filter: [{{name: pii, email_replacement: ""}}, {{name: c4, bad_words_file: "{words}"}}]\n'
    text = config_text(data, output=str(out)) + filters
    return RunContext(load_config_text(text, ["spark.master=local[2]"]), spark=spark)


def _run(ctx: RunContext, log=lambda _: None, force: str | None = None) -> None:
    """Ingest (reused when finished), then the filter stage."""
    run_stages(ctx, only="ingest", log=log)
    run_stages(ctx, only="filter", force=force, log=log)


def _rows(out: Path, name: str) -> list[dict]:
    table = ds.dataset(out / name, format="parquet", exclude_invalid_files=True).to_table()
    return sorted(table.to_pylist(), key=lambda r: r["doc_id"])


def test_an_edited_bad_words_file_is_not_reused(spark, tmp_path) -> None:
    data, words = _corpus(tmp_path), tmp_path / "words.txt"
    words.write_text("zzzz\n", encoding="utf-8")
    out = tmp_path / "run"
    _run(_context(spark, data, words, out))
    first = _rows(out, layout.FILTERED)
    assert len(first) == 40
    words.write_text("fox\n", encoding="utf-8")  # the same path, other words
    with pytest.raises(StageError, match="bad_words_file"):
        _run(_context(spark, data, words, out))
    messages: list[str] = []
    _run(_context(spark, data, words, out), messages.append, force="filter")
    assert not any("reusing" in m and "[filter]" in m for m in messages)
    fresh = tmp_path / "fresh"
    _run(_context(spark, data, words, fresh))
    for table in (layout.FILTERED, layout.FILTER_DROPPED):
        assert _rows(out, table) == _rows(fresh, table)
    kept = _rows(out, layout.FILTERED)
    assert len(kept) == 30 and not any("fox" in r["text"] for r in kept)
    reasons = [r["reason"] for r in _rows(out, layout.FILTER_DROPPED)]
    assert sorted(reasons) == ["c4.document_removed_with_badwords"] * 10 + ["pii.empty"] * 4
    summary = json.loads((out / layout.FILTER_SUMMARY).read_text())["sources"]["web"]
    assert summary["dropped"] == {"c4.document_removed_with_badwords": 10, "pii.empty": 4}
    assert (summary["read"], summary["kept"]) == (44, 30)
