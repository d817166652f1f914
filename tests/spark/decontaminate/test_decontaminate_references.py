"""Decontamination references checked early and followed on resume (issue #28, items 6 and 9): a reference path
matching nothing fails at preflight naming its key, a reference yielding no n-gram is warned about, and a
reference whose files changed makes a resumed run recompute its dedup, saying which reference changed."""

from __future__ import annotations

import logging
import os
import random
import time

import pyarrow.parquet as pq
import pytest

from pipeline.config import ConfigError, load_config_text
from pipeline.run import preflight
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext
from tests.index_corpus import random_doc, write_jsonl
from tests.spark.decontaminate.test_decontaminate import BENCH_A, BENCH_B


def _config(root, refs: list[tuple[str, str]]):
    yaml_refs = "".join(f"    - name: {name}\n      paths: [{path}]\n" for name, path in refs)
    return load_config_text(f"""
output: {root / "run"}
sources:
  - name: web
    paths: [{root / "in" / "docs.jsonl"}]
decontaminate:
  references:
{yaml_refs}tokenizer:
  train: true
""")


def test_a_reference_path_matching_nothing_fails_at_preflight_naming_its_key(tmp_path):
    write_jsonl(tmp_path / "in" / "docs.jsonl", ["a text"])
    write_jsonl(tmp_path / "refs" / "a.jsonl", [BENCH_A])
    config = _config(
        tmp_path, [("bench-a", tmp_path / "refs" / "a.jsonl"), ("bench-b", tmp_path / "refs" / "b*.jsonl")]
    )
    with pytest.raises(ConfigError) as err:
        preflight.check_paths(config)
    assert err.value.key == "decontaminate.references.1.paths.0" and "no input files match" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.spark
def test_a_reference_yielding_no_ngrams_is_warned_about(spark, tmp_path, caplog):
    rng = random.Random(3)
    write_jsonl(tmp_path / "in" / "docs.jsonl", [random_doc(rng, 40) for _ in range(6)] + [f"x {BENCH_A} y"])
    write_jsonl(tmp_path / "refs" / "a.jsonl", [BENCH_A])
    (tmp_path / "refs" / "empty.jsonl").write_bytes(b"")
    (tmp_path / "refs" / "binary.jsonl").write_bytes(bytes(range(256)) * 8)
    refs = [("bench-a", "a.jsonl"), ("empty", "empty.jsonl"), ("binary", "binary.jsonl")]
    config = _config(tmp_path, [(name, tmp_path / "refs" / f) for name, f in refs])
    ctx = RunContext(config, spark=spark)
    run_stages(ctx, only="ingest", log=lambda *_: None)
    with caplog.at_level(logging.INFO, logger="pipeline"):
        counts = run_stages(ctx, only="dedup", log=lambda *_: None)["dedup"].counts
    assert counts["contaminated"] == 1
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for i, name in ((1, "empty"), (2, "binary")):
        assert any(f"decontaminate.references.{i} ('{name}')" in w and "no 13-grams" in w for w in warned), warned
    assert not any("bench-a" in w for w in warned)


def _bump(path) -> None:
    """A file's modification time moved on, as a rewrite would move it (a coarse clock cannot hide the change)."""
    later = time.time() + 5
    os.utime(path, (later, later))


@pytest.mark.spark
def test_a_changed_or_added_reference_file_makes_the_resumed_dedup_recompute(spark, tmp_path):
    rng = random.Random(4)
    clean = [random_doc(rng, 40) for _ in range(6)]
    write_jsonl(tmp_path / "in" / "docs.jsonl", clean + [f"x {BENCH_A} y", f"z {BENCH_B} w"])
    refs = tmp_path / "refs"
    write_jsonl(refs / "a" / "part-0.jsonl", ["an unrelated benchmark text of a few words only " * 3])
    write_jsonl(refs / "b.jsonl", ["another unrelated benchmark question that matches nothing at all " * 2])
    config = _config(tmp_path, [("bench-a", refs / "a"), ("bench-b", refs / "b.jsonl")])
    ctx = RunContext(config, spark=spark)
    run_stages(ctx, only="ingest", log=lambda *_: None)
    assert run_stages(ctx, only="dedup", log=lambda *_: None)["dedup"].counts["contaminated"] == 0

    write_jsonl(refs / "b.jsonl", [BENCH_B])  # contents changed
    _bump(refs / "b.jsonl")
    said: list[str] = []
    counts = run_stages(ctx, only="dedup", log=said.append)["dedup"].counts
    assert counts["contaminated"] == 1
    assert any("reference 'bench-b' changed" in line and "b.jsonl" in line for line in said), said
    assert not any("'bench-a'" in line for line in said)

    write_jsonl(refs / "a" / "part-1.jsonl", [BENCH_A])  # a file added below a reference's directory
    said.clear()
    counts = run_stages(ctx, only="dedup", log=said.append)["dedup"].counts
    assert counts["contaminated"] == 2
    assert any("reference 'bench-a' changed" in line and "added: part-1.jsonl" in line for line in said), said
    rows = pq.read_table(tmp_path / "run" / "dedup" / "contaminated").to_pylist()
    assert sorted(r["reference"] for r in rows) == ["bench-a", "bench-b"]

    said.clear()
    run_stages(ctx, only="dedup", log=said.append)  # nothing changed since: reused
    assert any(line.startswith("[dedup] already finished") for line in said), said
