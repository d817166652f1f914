"""Progress through the ``pipeline`` logger (issue #18): a driver log without terminal noise, one line per
stage step with counts and seconds, and Spark jobs named after the stage and step they belong to."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli.commands import main
from pipeline.logs import JOB_DESCRIPTION, StepLog, configure_logging

REPO = Path(__file__).resolve().parents[2]
LOGGER_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARNING|ERROR) pipeline(\.[\w]+)*: ")
DEDUP_STEPS = ("features", "exact_prepass", "buckets", "verify", "components", "survivors")
STAGES = ("ingest", "dedup", "train-tokenizer", "tokenize", "merge-blend")


def write_tiny_corpus(directory: Path) -> Path:
    """41 documents with near and exact duplicates, and one malformed record (a reject)."""
    directory.mkdir(parents=True, exist_ok=True)
    words = [f"w{i}" for i in range(400)]
    lines = []
    for doc in range(30):
        text = " ".join(words[(doc * 13 + k * 7) % 400] for k in range(60))
        lines.append(json.dumps({"text": text}))
        if doc % 5 == 0:  # a near copy: one word changed
            lines.append(json.dumps({"text": text.replace(text.split()[30], "changed", 1)}))
        if doc % 7 == 0:  # an exact copy
            lines.append(json.dumps({"text": text}))
    lines.append('{"text": "an unterminated')
    path = directory / "tiny.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def tiny_config(tmp_path: Path) -> Path:
    """A config over the tiny corpus, small enough for a whole run in a subprocess."""
    data = write_tiny_corpus(tmp_path / "data")
    config = tmp_path / "tiny.yaml"
    config.write_text(f"""output: {tmp_path / "run"}
spark:
  master: local[2]
  settings: {{spark.sql.shuffle.partitions: "2", spark.default.parallelism: "2", spark.ui.enabled: "false",
             spark.driver.memory: 1g}}
sources:
  - {{name: tiny, paths: ["{data}"], format: jsonl}}
dedup: {{num_perm: 64, threshold: 0.7, ngram: 3, min_tokens: 5}}
tokenizer: {{train: true, vocab_size: 300}}
ingest: {{partitions: 1}}
tokenize: {{partitions: 1}}
""")
    return config


def test_logger_lines_carry_time_level_and_name(capsys, monkeypatch):
    monkeypatch.delenv("PIPELINE_LOG_LEVEL", raising=False)
    configure_logging()
    logging.getLogger("pipeline.dedup").info("dedup: buckets done in %.1f s", 1.25)
    logging.getLogger("pipeline.dedup").debug("not shown at INFO")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and LOGGER_LINE.match(err[0])
    assert err[0].endswith("pipeline.dedup: dedup: buckets done in 1.2 s")
    monkeypatch.setenv("PIPELINE_LOG_LEVEL", "warning")
    configure_logging()
    logging.getLogger("pipeline.run").info("hidden")
    assert capsys.readouterr().err == ""
    assert len([h for h in logging.getLogger("pipeline").handlers if type(h).__name__ == "_StderrHandler"]) == 1


def test_a_bad_log_level_in_the_environment_is_one_line(monkeypatch, capsys):
    monkeypatch.setenv("PIPELINE_LOG_LEVEL", "chatty")
    assert main(["ingest", "--config", "conf/local.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "PIPELINE_LOG_LEVEL" in err[0] and "'CHATTY'" in err[0], err
    monkeypatch.delenv("PIPELINE_LOG_LEVEL")
    configure_logging()


@pytest.mark.spark
def test_step_log_names_the_spark_jobs_of_each_step_and_restores_the_stage_name(spark, caplog):
    sc = spark.sparkContext
    sc.setJobDescription("dedup")
    steps = StepLog("dedup", spark)
    seen = {}
    for step in ("buckets", "verify"):
        steps.begin(step)
        seen[step] = sc.getLocalProperty(JOB_DESCRIPTION)
        with caplog.at_level(logging.INFO, logger="pipeline"):
            steps.lap(step, candidate_edges=3)
    steps.close()
    assert seen == {"buckets": "dedup: buckets", "verify": "dedup: verify"}
    assert sc.getLocalProperty(JOB_DESCRIPTION) == "dedup"
    assert set(steps.times) == {"buckets", "verify"}
    assert [r.getMessage().split(" done")[0] for r in caplog.records] == ["dedup: buckets", "dedup: verify"]
    sc.setLocalProperty(JOB_DESCRIPTION, None)
    assert sc.getLocalProperty(JOB_DESCRIPTION) is None


@pytest.mark.spark
def test_the_dedup_stage_runs_each_step_under_its_own_job_description(spark, tmp_path, monkeypatch):
    """The real stage: the description is read inside the buckets and verify steps' own code."""
    import pipeline.dedup.spark.candidates as dedup_candidates
    import pipeline.dedup.stage as dedup_stage
    from pipeline.config import load_config
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext

    seen: list[tuple[str, str | None]] = []
    for module, name in ((dedup_candidates, "candidate_edges"), (dedup_stage, "verify_edges")):
        original = getattr(module, name)

        def spy(*args, _original=original, _name=name):
            seen.append((_name, spark.sparkContext.getLocalProperty(JOB_DESCRIPTION)))
            return _original(*args)

        monkeypatch.setattr(module, name, spy)
    # the distributed buckets (the tiny corpus would otherwise take the one-task plan)
    config = load_config(str(tiny_config(tmp_path)), ["dedup.local_buckets_max_rows=0"])
    run_stages(RunContext(config, spark=spark), only="ingest", log=lambda *_: None)
    run_stages(RunContext(config, spark=spark), only="dedup", log=lambda *_: None)
    assert seen == [("candidate_edges", "dedup: buckets"), ("verify_edges", "dedup: verify")]
    assert spark.sparkContext.getLocalProperty(JOB_DESCRIPTION) is None  # reset after the stage


@pytest.mark.spark
@pytest.mark.slow
def test_a_run_without_a_terminal_logs_one_clean_line_per_step(tmp_path):
    """As on a cluster: stdin/stdout/stderr are pipes. Every pipeline line on stderr is a logger line,
    nothing is redrawn (no carriage return, no tqdm or Spark progress bar), each step appears once."""
    config = tiny_config(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "run", "--config", str(config)],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        env={**__import__("os").environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out, err = done.stdout, done.stderr
    assert "\r" not in err and "\r" not in out
    assert not re.search(r"\[Stage \d+:", err), "Spark's console progress bar reached the log"
    assert not re.search(r"\d+%\|", err + out), "a tqdm bar reached the log"
    ours = [line for line in err.splitlines() if "pipeline." in line or line.startswith("[")]
    assert ours and all(LOGGER_LINE.match(line) for line in ours), [x for x in ours if not LOGGER_LINE.match(x)]
    for stage in STAGES:
        done_lines = [line for line in ours if f"[{stage}] done in " in line]
        assert len(done_lines) == 1, (stage, done_lines)
    dedup_line = next(line for line in ours if "[dedup] done in " in line)
    assert re.search(r"duplicates_removed=\d+", dedup_line) and re.search(r"survivors=\d+", dedup_line)
    for step in DEDUP_STEPS:
        lines = [line for line in ours if f"dedup: {step} done in " in line]
        assert len(lines) == 1, (step, lines)
    counts = {
        step: dict(re.findall(r"(\w+)=(\d+)", next(x for x in ours if f"dedup: {step} done" in x)))
        for step in DEDUP_STEPS
    }
    assert counts["features"]["documents"] == "41"  # 30 texts + 6 near copies + 5 exact copies (1 reject)
    assert int(counts["buckets"]["candidate_edges"]) >= int(counts["verify"]["verified_edges"]) > 0
    # stdout keeps its contract: the summary table and the last line
    assert out.splitlines()[-1].startswith("finished in ") and "source        read" in out
    assert not LOGGER_LINE.search(out)


def test_progress_bars_only_on_a_terminal(capsys):
    """progress=None (what the stages pass) draws nothing when stderr is not a terminal; True always draws."""
    from pipeline.tokenizer.train import train_merges

    counts = {b"abab": 5, b"abc": 3, b"bcd": 2}
    assert train_merges(counts, 3, progress=None) == train_merges(counts, 3, progress=True)
    err = capsys.readouterr().err
    assert err.count("bpe merges") >= 1  # the forced bar only
    train_merges(counts, 3, progress=None)
    assert capsys.readouterr().err == ""
