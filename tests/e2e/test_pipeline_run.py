"""Whole runs on the bundled sample: megatron-core reads the outputs, accounting holds, and the
files do not depend on partitioning, task failures or a killed driver (docs/stages.md, Determinism;
docs/bad_input.md, Faults and re-runs)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pipeline.config import load_config_text
from pipeline.run.runner import StageError, run_stages
from pipeline.stage_api.context import RunContext
from tests.cluster_runs import file_digests
from tests.oracles import require_oracle
from tests.sample_runs import SampleRun

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[2]


def _config(out: Path, overrides=()):
    text = (REPO / "conf" / "local.yaml").read_text()
    return load_config_text(text, [f"output={out}", "spark.master=local[2]", *overrides])


@pytest.fixture(scope="module")
def reference(sample_run: SampleRun):
    """One clean run on the sample: 2 ingest splits, 2 tokenize shards per source (made once per session,
    tests/sample_runs.py; the same as ``_config(out, ["ingest.partitions=2", "tokenize.partitions=2"])``)."""
    return sample_run.path, sample_run.results


def test_outputs_open_in_megatron_core_and_accounting_holds(reference):
    MegatronDataset = require_oracle("megatron.core.datasets.indexed_dataset").IndexedDataset

    out, results = reference
    manifest = json.loads((out / "manifest.json").read_text())
    for source, row in manifest["accounting"].items():
        filtered = sum(row.get("filtered", {}).values())  # conf/local.yaml runs the filter stage
        assert filtered > 0 and row["passed_filters"] == row["documents_read"] - row["rejected"] - filtered
        assert row["documents_read"] == row["rejected"] + filtered + row["duplicates_removed"] + row["survivors"]
        ds = MegatronDataset(str(out / "megatron" / source))
        assert len(ds) == row["survivors"] == row["written"] > 0
        eod = results["tokenize"].counts["eod_id"]
        assert all(int(ds[i][-1]) == eod for i in range(len(ds)))
    index = np.load(out / "blend" / "dataset_index.npy", allow_pickle=False)
    sample = np.load(out / "blend" / "dataset_sample_index.npy", allow_pickle=False)
    blend = json.loads((out / "blend" / "blend.json").read_text())
    assert len(index) == len(sample) == blend["size"]
    assert (out / "report.html").read_text().count("<svg") >= 3  # charts are inline SVG


def test_partition_counts_and_an_injected_task_failure_change_no_byte(spark, reference, tmp_path):
    out = tmp_path / "run"
    ctx = RunContext(_config(out, ["ingest.partitions=5", "tokenize.partitions=3"]), spark=spark)
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    spark.sparkContext.setLocalProperty("pipeline.inject_failure", "tokenize")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(REPO)
            results = run_stages(ctx, log=lambda *_: None)
    finally:
        spark.sparkContext.setLocalProperty("pipeline.inject_failure", None)
        spark.conf.set("spark.sql.shuffle.partitions", "4")
    assert sum(s["retried_tasks"] for s in results["tokenize"].counts["sources"].values()) >= 1
    assert file_digests(out) == file_digests(reference[0])


def _cli(out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pipeline",
        "run",
        "--config",
        "conf/local.yaml",
        "--set",
        f"output={out}",
        "--set",
        "spark.master=local[2]",
        "--set",
        "ingest.partitions=2",
        "--set",
        "tokenize.partitions=2",
        *extra,
    ]


def test_driver_killed_during_dedup_then_rerun_gives_identical_files(reference, tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        _cli(out),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        for line in proc.stdout:
            if "[dedup] running" in line:
                time.sleep(4)  # let dedup write part of its outputs
                break
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert not (out / "_stages" / "dedup" / "_SUCCESS").exists()
    assert (out / "_stages" / "ingest" / "_SUCCESS").exists()
    rerun = subprocess.run(_cli(out), cwd=REPO, capture_output=True, text=True, env=env, timeout=900)
    assert rerun.returncode == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    assert "[ingest] already finished" in rerun.stderr  # progress is logged on stderr
    assert file_digests(out) == file_digests(reference[0])


def test_changed_config_is_refused_and_leaves_the_run_untouched(reference, tmp_path, capsys):
    from pipeline.cli.commands import main

    out, _ = reference
    before, manifest = file_digests(out), (out / "manifest.json").read_bytes()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        code = main(
            [
                "run",
                "--config",
                "conf/local.yaml",
                "--set",
                f"output={out}",
                "--set",
                "ingest.partitions=2",
                "--set",
                "tokenize.partitions=2",
                "--set",
                "dedup.threshold=0.8",
            ]
        )
    assert code == 1
    err = capsys.readouterr().err
    assert "dedup.threshold" in err and "--force dedup" in err
    assert file_digests(out) == before
    assert (out / "manifest.json").read_bytes() == manifest


def test_one_stage_job_reuses_finished_stages_and_still_checks_accounting(spark, reference, tmp_path):
    """What a per-stage cluster workflow does: each job names one stage; a retry resumes."""
    run = tmp_path / "run"
    shutil.copytree(reference[0], run)
    base = ["ingest.partitions=2", "tokenize.partitions=2"]
    messages: list[str] = []
    ctx = RunContext(_config(run, base), spark=spark)
    results = run_stages(ctx, only="tokenize", log=messages.append)
    assert all("already finished" in m for m in messages if m.startswith("[")), messages
    assert set(results) == {"ingest", "filter", "dedup", "train-tokenizer", "tokenize"}
    reweighted = RunContext(_config(run, [*base, "sources.web.weight=0.7"]), spark=spark)
    with pytest.raises(StageError, match=r"merge-blend.*weights\.web.*--force merge-blend"):
        run_stages(reweighted, only="merge-blend", log=messages.append)
    (run / "manifest.json").unlink()
    messages.clear()
    results = run_stages(reweighted, only="merge-blend", force="merge-blend", log=messages.append)
    assert [m for m in messages if m.endswith("running")] == ["[merge-blend] running"]
    manifest = json.loads((run / "manifest.json").read_text())
    merged = results["merge-blend"].counts["merge"]["sources"]
    assert manifest["accounting"]["web"]["written"] == merged["web"]["documents"]
    assert (
        json.loads((run / "blend" / "blend.json").read_text())["weights"][0]
        != json.loads((reference[0] / "blend" / "blend.json").read_text())["weights"][0]
    )


def test_inspect_traces_decoded_samples_to_their_raw_record(reference, capsys):
    import re

    from pipeline.cli.inspect import inspect_main

    out, _ = reference
    assert inspect_main(str(out / "megatron" / "web"), str(out / "tokenizer"), 1) == 0
    printed = capsys.readouterr().out
    match = re.search(r"--- document 0 \(.*doc_id (-?\d+) from (\S+) at (\d+)\) ---\n(.*)", printed)
    assert match, printed[-500:]
    _, rel, position, first_line = match.groups()
    raw = (REPO / "pipeline" / "sample" / "web" / rel).read_bytes()
    record = json.loads(raw[int(position) :].split(b"\n", 1)[0])
    assert record["text"].startswith(first_line)
