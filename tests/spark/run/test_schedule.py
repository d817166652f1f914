"""Dated runs: ``--date`` fills ``{date}``; a run for a new date makes a new run directory and leaves
earlier ones byte-for-byte untouched."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import runpy
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.cli.schedule import ScheduleError, cli_argv, dated_overrides, job_main, resolve_date

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "pipeline" / "sample" / "web" / "part-0000.jsonl"


def test_resolve_date():
    now = dt.datetime(2026, 11, 22, 0, 30, tzinfo=dt.timezone.utc)
    assert resolve_date("2026-11-22") == "2026-11-22"
    assert resolve_date("yesterday", now) == "2026-11-21"
    assert resolve_date("Today", now) == "2026-11-22"
    assert resolve_date("2026-03-01", now) == "2026-03-01"
    for bad in ("2026/11/22", "22-11-2026", "2026-02-30", "", "{{ ds }}"):
        with pytest.raises(ScheduleError):
            resolve_date(bad)


def test_dated_overrides_fill_every_placeholder():
    raw = {
        "output": "gs://b/runs/{date}",
        "spark": {"checkpoint_dir": "gs://b/tmp/{date}", "settings": {"spark.x": "1"}},
        "sources": [
            {"name": "web", "paths": ["gs://b/raw/web/dt={date}/", "gs://b/static/"]},
            {"name": "books", "paths": ["gs://b/books/"]},
            {"paths": ["x/{date}"]},
        ],
    }
    assert dated_overrides(raw, "2026-11-22") == [
        'output="gs://b/runs/2026-11-22"',
        'spark.checkpoint_dir="gs://b/tmp/2026-11-22"',
        'sources.web.paths=["gs://b/raw/web/dt=2026-11-22/", "gs://b/static/"]',
        'sources.2.paths=["x/2026-11-22"]',
    ]


def test_a_dated_run_needs_a_dated_output():
    with pytest.raises(ScheduleError, match="output"):
        dated_overrides(
            {"output": "gs://b/runs/fixed", "sources": [{"name": "w", "paths": ["r/{date}"]}]}, "2026-11-22"
        )


def test_cli_argv(tmp_path):
    dated = tmp_path / "dated.yaml"
    dated.write_text('output: runs/{date}\nsources:\n  - name: web\n    paths: ["raw/dt={date}/"]\n')
    argv = cli_argv("dedup", ["--config", str(dated), "--date", "2026-11-22", "--set", "output=mine"])
    assert argv == [
        "dedup",
        "--config",
        str(dated),
        "--if-on",
        "--set",
        'output="runs/2026-11-22"',
        "--set",
        'sources.web.paths=["raw/dt=2026-11-22/"]',
        "--set",
        "output=mine",
    ]
    with pytest.raises(ScheduleError, match="--date"):
        cli_argv("run", ["--config", str(dated)])
    assert job_main("run", ["--config", str(dated)]) == 2
    unquoted = tmp_path / "unquoted.yaml"
    unquoted.write_text("output: runs/{date}\nsources:\n  - name: web\n    paths: [raw/dt={date}/]\n")
    with pytest.raises(ScheduleError, match="quote"):
        cli_argv("run", ["--config", str(unquoted), "--date", "2026-11-22"])
    plain = REPO / "conf" / "local.yaml"
    assert cli_argv("run", ["--config", str(plain), "--force", "dedup"]) == [
        "run",
        "--config",
        str(plain),
        "--force",
        "dedup",
    ]
    with pytest.raises(ScheduleError, match="output"):
        cli_argv("run", ["--config", str(plain), "--date", "2026-11-22"])


def test_a_job_for_a_stage_the_config_turns_off_is_a_no_op(tmp_path, capsys):
    """A workflow submits every stage's job in order: the job of a stage the config turns off (spans without a
    ``spans`` section) prints a note and exits 0 before Spark starts, while ``python -m pipeline spans`` says the
    stage is off and exits 2 (docs/bad_input.md)."""
    from pipeline.cli.commands import main

    (tmp_path / "x.jsonl").write_text('{"text": "a document"}\n')
    config = tmp_path / "c.yaml"
    source = f"  - name: web\n    paths: [{tmp_path}/x.jsonl]\n"
    config.write_text(f"output: {tmp_path / 'run'}\nsources:\n{source}tokenizer: {{train: true}}\n")
    assert job_main("spans", ["--config", str(config)]) == 0
    assert "spans: the spans stage is off in this config" in capsys.readouterr().out
    assert main(["spans", "--config", str(config)]) == 2
    assert "the spans stage is off" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # nothing ran, no lock taken


def _tree_hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _run_job(config: Path, date: str, monkeypatch) -> int:
    """``jobs/job_pipeline.py --config C --date D`` in this process (its Spark session is the shared one)."""
    monkeypatch.setattr(sys, "argv", ["jobs/job_pipeline.py", "--config", str(config), "--date", date])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(REPO / "jobs" / "job_pipeline.py"), run_name="__main__")
    return exc.value.code


@pytest.mark.spark
def test_two_scheduled_days_each_read_the_previous_day_and_leave_earlier_runs_untouched(tmp_path, spark, monkeypatch):
    """Two consecutive scheduled runs through the schedule code that Cloud Scheduler / the workflow
    template use (``--date yesterday``, resolved by the job when it starts) at 03:00 UTC on two days."""
    from pipeline.cli import schedule

    lines = SAMPLE.read_text().splitlines(keepends=True)
    for date, chunk in (("2026-11-21", lines[:30]), ("2026-11-22", lines[30:60])):
        part = tmp_path / "raw" / "web" / f"dt={date}"
        part.mkdir(parents=True)
        (part / "part-0000.jsonl").write_text("".join(chunk))
    config = tmp_path / "scheduled.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "output": f"{tmp_path}/runs/{{date}}",
                "spark": {"master": "local[2]"},
                "sources": [{"name": "web", "paths": [f"{tmp_path}/raw/web/dt={{date}}/"], "keep_fields": ["url"]}],
                "ingest": {"partitions": 2},
                "dedup": {"num_perm": 64},
                "tokenizer": {"train": True, "vocab_size": 300},
                "tokenize": {"partitions": 2},
                "blend": {"oversample": "wrap"},
            }
        )
    )
    runs = tmp_path / "runs"

    monkeypatch.setattr(schedule, "utc_now", lambda: dt.datetime(2026, 11, 22, 3, 0, tzinfo=dt.timezone.utc))
    assert _run_job(config, "yesterday", monkeypatch) == 0
    assert sorted(p.name for p in runs.iterdir()) == ["2026-11-21"]
    first = _tree_hashes(runs / "2026-11-21")
    assert "megatron/web.bin" in first and "blend/blend.json" in first

    monkeypatch.setattr(schedule, "utc_now", lambda: dt.datetime(2026, 11, 23, 3, 0, tzinfo=dt.timezone.utc))
    assert _run_job(config, "yesterday", monkeypatch) == 0
    assert sorted(p.name for p in runs.iterdir()) == ["2026-11-21", "2026-11-22"]
    second = _tree_hashes(runs / "2026-11-22")
    assert "megatron/web.bin" in second and "blend/blend.json" in second
    for date in ("2026-11-21", "2026-11-22"):  # each read its own (previous) day's partition
        manifest = json.loads((runs / date / "manifest.json").read_text())
        assert f"dt={date}/" in json.dumps(manifest["config"]["sources"]), date
    assert second["megatron/web.bin"] != first["megatron/web.bin"]  # it read its own date's input
    assert _tree_hashes(runs / "2026-11-21") == first  # byte-for-byte untouched


def test_relative_dates_come_from_the_clock_file_when_there_is_one(tmp_path, monkeypatch, capsys):
    """A run that started at 23:59 on the 22nd and reaches its next stage after midnight still means the 21st."""
    from pipeline.cli import schedule

    clock = tmp_path / "date-clock"
    monkeypatch.setattr(schedule, "CLOCK_FILE", str(clock))
    now = dt.datetime.now(dt.timezone.utc)
    assert resolve_date("today") == now.date().isoformat()  # no file: the current time
    clock.write_text("2026-11-22T23:59:30Z\n")
    assert resolve_date("yesterday") == "2026-11-21" and resolve_date("today") == "2026-11-22"
    assert resolve_date("2026-01-05") == "2026-01-05"  # an explicit date ignores the clock
    config = tmp_path / "dated.yaml"
    config.write_text(
        yaml.safe_dump({"output": f"{tmp_path}/runs/{{date}}", "sources": [{"name": "w", "paths": ["x"]}]})
    )
    argv = cli_argv("ingest", ["--config", str(config), "--date", "yesterday"])
    assert f'output="{tmp_path}/runs/2026-11-21"' in argv
    assert f"yesterday: 2026-11-21 (UTC, from {clock}" in capsys.readouterr().out
    clock.write_text("tomorrow\n")
    with pytest.raises(ScheduleError, match="not a UTC time"):
        resolve_date("yesterday")
