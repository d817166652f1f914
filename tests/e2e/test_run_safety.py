"""Whole-pipeline cases of issue 14 through the CLI's main(): resume verifies what it reuses (item 7), and
errors from stages are one line with the right exit code (item 10). One finished run on the sample is
copied for each case; only the stages a case touches run again."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from pipeline.cli.commands import main
from pipeline.config import load_config_text
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext
from tests.sample_runs import SAMPLE_SETS, SampleRun

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]
BASE = ["spark.master=local[2]", "ingest.partitions=2", "tokenize.partitions=2"]


def _argv(command: str, out: Path, *sets: str, extra: tuple[str, ...] = ()) -> list[str]:
    argv = [command, "--config", "conf/local.yaml", "--set", f"output={out}"]
    for s in (*BASE, *sets):
        argv += ["--set", s]
    return argv + list(extra)


def _error_line(err: str) -> str:
    """The one ``error:`` line of stderr (progress bars may precede it), and no traceback."""
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _digests(run: Path, sub: str) -> dict[str, str]:
    return {
        str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((run / sub).rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def finished(sample_run: SampleRun) -> Path:
    """conf/local.yaml with BASE, run once per session (tests/sample_runs.py); only ever copied."""
    assert list(SAMPLE_SETS) == BASE
    return sample_run.path


@pytest.fixture
def copy(finished, tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(REPO)
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    return run


def test_truncated_bin_and_garbage_idx_are_recomputed_not_reused(finished, copy, capsys):
    web_bin, wiki_idx = copy / "megatron" / "web.bin", copy / "megatron" / "wiki.idx"
    web_bin.write_bytes(web_bin.read_bytes()[:-64])
    wiki_idx.write_bytes(b"\x00garbage" * (wiki_idx.stat().st_size // 8))
    assert main(_argv("run", copy)) == 0
    printed = capsys.readouterr().err  # progress is logged on stderr
    warning = next(line for line in printed.splitlines() if "[merge-blend] WARNING" in line)
    assert "megatron/web.bin" in warning and "megatron/wiki.idx" in warning
    assert "[ingest] already finished" in printed and "[tokenize] already finished" in printed
    assert "[merge-blend] running" in printed
    assert _digests(copy, "megatron") == _digests(finished, "megatron")


def test_deleted_parquet_part_file_recomputes_that_stage(finished, copy, spark):
    part = sorted((copy / "documents").glob("part-*"))[0]
    part.unlink()
    messages: list[str] = []
    config = load_config_text((REPO / "conf" / "local.yaml").read_text(), [f"output={copy}", *BASE])
    results = run_stages(RunContext(config, spark=spark), only="ingest", log=messages.append)
    warning = next(m for m in messages if m.startswith("[ingest] WARNING"))
    assert f"documents/{part.name}: missing" in warning
    assert "[ingest] running" in messages
    assert not (copy / "_stages" / "dedup" / "_SUCCESS").exists()  # what follows will be recomputed
    original = spark.read.parquet(str(finished / "documents")).count()
    assert spark.read.parquet(str(copy / "documents")).count() == original
    assert sum(s["documents"] for s in results["ingest"].counts["sources"].values()) == original


def test_garbled_vocab_and_merges_files_are_one_line_config_errors(finished, copy, tmp_path, capsys):
    bad_vocab = tmp_path / "vocab.json"
    bad_vocab.write_text('{"a": 0, "b": ')
    merges = finished / "tokenizer" / "merges.txt"
    sets = ("tokenizer.train=false", f"tokenizer.vocab={bad_vocab}", f"tokenizer.merges={merges}")
    assert main(_argv("tokenize", copy, *sets, extra=("--force", "tokenize"))) == 2
    err = _error_line(capsys.readouterr().err)
    assert "'tokenizer.vocab'" in err and str(bad_vocab) in err, err
    bad_merges = tmp_path / "merges.txt"
    bad_merges.write_text("#version: 0.2\nthis-line-has-no-space\n")
    sets = (
        "tokenizer.train=false",
        f"tokenizer.vocab={finished / 'tokenizer' / 'vocab.json'}",
        f"tokenizer.merges={bad_merges}",
    )
    assert main(_argv("tokenize", copy, *sets, extra=("--force", "tokenize"))) == 2
    err = _error_line(capsys.readouterr().err)
    assert "'tokenizer.merges'" in err and str(bad_merges) in err, err


def test_oversampling_blend_is_a_one_line_config_error(copy, capsys):
    code = main(
        _argv("merge-blend", copy, "blend.oversample=error", "blend.size=100000", extra=("--force", "merge-blend"))
    )
    err = _error_line(capsys.readouterr().err)
    assert code == 2 and "blend.size" in err and "oversample" in err, err


def test_no_documents_left_stops_before_training_a_tokenizer(spark, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": \n not json\n{"other": 1}\n')
    out = tmp_path / "run"
    config = tmp_path / "c.yaml"
    config.write_text(
        f"output: {out}\nsources:\n  - name: bad\n    paths: [{bad}]\n    format: jsonl\n"
        "tokenizer:\n  train: true\n  vocab_size: 300\n"
    )
    code = main(["run", "--config", str(config), "--set", "spark.master=local[2]"])
    err = _error_line(capsys.readouterr().err)
    assert code == 1, err
    assert "no documents left after ingest (3 read" in err
    assert (out / "_stages" / "ingest" / "_SUCCESS").exists()
    assert not (out / "tokenizer").exists() and not (out / "_stages" / "dedup").exists()
