"""Which files a source reads (issue #28 items 1, 2, 6, 16, 17): hidden names are counted, directory links
followed (loops not), paths with ``[`` read as themselves, small files packed into few tasks, and a changed
input listing recomputes a finished ingest."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from pipeline.config import ConfigError, load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext

pytestmark = pytest.mark.spark


def _jsonl(*texts: str) -> str:
    return "".join(json.dumps({"text": t}) + "\n" for t in texts)


def _config(out: Path, paths: list[str], extra: str = ""):
    quoted = ", ".join(f'"{p}"' for p in paths)
    return load_config_text(f"""
output: {out}
tokenizer: {{train: true}}
ingest: {{max_text_bytes: 10000{extra}}}
sources:
  - {{name: web, paths: [{quoted}]}}
""")


def _ingest(spark, config, log=None) -> dict:
    return run_stages(RunContext(config, spark=spark), only="ingest", log=log or (lambda *_: None))["ingest"].counts


def _texts(spark, run: Path) -> list[str]:
    return sorted(r["text"] for r in spark.read.parquet(str(run / "documents")).collect())


@pytest.fixture()
def hidden(tmp_path):
    raw = tmp_path / "raw"
    (raw / "sub").mkdir(parents=True)
    (raw / "sub" / "_tmp").mkdir()
    (raw / "a.jsonl").write_text(_jsonl("seen one"))
    (raw / "sub" / "b.jsonl").write_text(_jsonl("seen two"))
    (raw / "_SUCCESS").write_text("")
    (raw / ".a.jsonl.crc").write_text(_jsonl("crc side file"))
    (raw / "_x").write_text(_jsonl("under score"))
    (raw / "sub" / ".x").write_text(_jsonl("dot file"))
    (raw / "sub" / "_tmp" / "c.jsonl").write_text(_jsonl("in a hidden directory"))
    return raw


def test_hidden_names_in_a_directory_source_are_counted_and_logged(spark, hidden, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="pipeline.ingest"):
        counts = _ingest(spark, _config(tmp_path / "run", [str(hidden)]))
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert _texts(spark, tmp_path / "run") == ["seen one", "seen two"]
    skipped = counts["skipped_files"]["web"]
    assert skipped["count"] == 5  # _SUCCESS, .a.jsonl.crc, _x, sub/.x and the directory sub/_tmp/
    assert set(skipped["examples"]) <= {"_SUCCESS", ".a.jsonl.crc", "_x", "sub/.x", "sub/_tmp/"}
    assert skipped["examples"]
    assert any("'web'" in m and " 5 " in m and "include_hidden" in m for m in messages), messages


def test_include_hidden_reads_them(spark, hidden, tmp_path):
    counts = _ingest(spark, _config(tmp_path / "run", [str(hidden)], ", include_hidden: true"))
    texts = _texts(spark, tmp_path / "run")
    assert texts == sorted(
        ["seen one", "seen two", "crc side file", "under score", "dot file", "in a hidden directory"]
    )
    assert counts["skipped_files"] == {}
    assert counts["sources"]["web"]["documents_read"] == 6  # the empty _SUCCESS holds no record


def test_a_linked_directory_is_read_and_a_link_to_an_ancestor_is_not_followed(spark, tmp_path):
    raw, elsewhere = tmp_path / "raw", tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    raw.mkdir()
    (raw / "a.jsonl").write_text(_jsonl("here"))
    (elsewhere / "b.jsonl").write_text(_jsonl("through the link"))
    (elsewhere / "deep" / "c.jsonl").write_text(_jsonl("deeper through the link"))
    os.symlink(elsewhere, raw / "linked")
    os.symlink("..", raw / "up")  # back to raw itself: a loop
    os.symlink(tmp_path, elsewhere / "deep" / "top")  # to an ancestor of the source directory
    counts = _ingest(spark, _config(tmp_path / "run", [str(raw)]))
    assert _texts(spark, tmp_path / "run") == ["deeper through the link", "here", "through the link"]
    assert counts["sources"]["web"]["rejected"] == 0
    files = {r["file"] for r in spark.read.parquet(str(tmp_path / "run" / "documents")).collect()}
    assert files == {"a.jsonl", "linked/b.jsonl", "linked/deep/c.jsonl"}
    skipped = counts["skipped_files"]["web"]
    assert skipped["count"] == 2 and sorted(skipped["examples"]) == ["linked/deep/top/", "up/"]


def test_an_existing_path_with_a_bracket_is_read_as_itself(spark, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "part[1].jsonl").write_text(_jsonl("bracketed"))
    (raw / "part1.jsonl").write_text(_jsonl("what the glob would match"))
    _ingest(spark, _config(tmp_path / "run", [str(raw / "part[1].jsonl")]))
    assert _texts(spark, tmp_path / "run") == ["bracketed"]


def test_a_missing_path_with_a_bracket_says_how_to_escape_it(tmp_path):
    from pipeline.ingest.stage import source_files

    with pytest.raises(ConfigError, match=r"sources\.0\.paths\.0.*no input files match.*\[\[\]"):
        source_files(_config(tmp_path / "run", [str(tmp_path / "part[2].jsonl")]))


def test_small_files_are_packed_into_few_tasks_and_parts(spark, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    for i in range(300):
        (raw / f"f{i:04d}.jsonl").write_text(_jsonl(f"small file {i}", f"second line of {i}"))
    counts = _ingest(spark, _config(tmp_path / "run", [str(raw)]))
    parts = list((tmp_path / "run" / "documents").glob("part-*.parquet"))
    assert 1 <= len(parts) <= 4, len(parts)
    assert counts["splits"] == 300
    assert counts["tasks"] <= 4
    assert counts["sources"]["web"]["documents"] == 600
    rows = spark.read.parquet(str(tmp_path / "run" / "documents")).collect()
    assert {(r["file"], r["position"]) for r in rows if r["text"] == "second line of 7"} == {
        ("f0007.jsonl", len(_jsonl("small file 7")))
    }


def test_a_file_added_to_a_source_recomputes_a_finished_ingest(spark, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.jsonl").write_text(_jsonl("first"))
    (raw / "b.jsonl").write_text(_jsonl("second"))
    _ingest(spark, _config(tmp_path / "run", [str(raw)]))
    messages: list[str] = []
    _ingest(spark, _config(tmp_path / "run", [str(raw)]), messages.append)
    assert any("reusing" in m for m in messages), messages  # nothing changed: reused
    (raw / "c.jsonl").write_text(_jsonl("added later"))
    (raw / "b.jsonl").write_text(_jsonl("second, rewritten"))
    messages.clear()
    counts = _ingest(spark, _config(tmp_path / "run", [str(raw)]), messages.append)
    why = [m for m in messages if "recomputing" in m]
    assert why and "web" in why[0] and "c.jsonl" in why[0] and "b.jsonl" in why[0], messages
    assert counts["sources"]["web"]["documents"] == 3
    assert _texts(spark, tmp_path / "run") == ["added later", "first", "second, rewritten"]


@pytest.mark.parametrize("pattern", ["{d}", "{d}/", "{d}/**/*.jsonl"])
def test_file_names_are_relative_to_the_configured_path_so_a_file_added_higher_up_renames_none(tmp_path, pattern):
    """A source's file names (hence doc ids) are relative to its path's directory, not to the deepest directory its
    files share: a file added above the others changes no name (issue 46)."""
    from pipeline.config import SourceConfig
    from pipeline.sources.splits import source_files

    d = tmp_path / "src"
    (d / "2024" / "03").mkdir(parents=True)
    (d / "2024" / "03" / "a.jsonl").write_text(_jsonl("one"))
    (d / "2024" / "03" / "b.jsonl").write_text(_jsonl("two"))
    source = [SourceConfig(name="s", paths=[pattern.format(d=d)], format="jsonl")]
    before = sorted(source_files(source)["s"].relative())
    assert before == ["2024/03/a.jsonl", "2024/03/b.jsonl"]
    (d / "top.jsonl").write_text(_jsonl("three"))
    after = sorted(source_files(source)["s"].relative())
    assert after == [*before, "top.jsonl"]
