"""The Dataproc and EMR schedules pass a dedup index to every job when asked (issue #17): --index."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pipeline.config import load_config_text
from pipeline.run.registry import STAGE_NAMES

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> str:
    done = subprocess.run(["bash", *args], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_workflow_template_jobs_get_the_index_and_the_config_accepts_it():
    sys.path.insert(0, str(REPO / "deploy" / "dataproc"))
    try:
        from render_template import render
    finally:
        sys.path.pop(0)
    data = render("gs://b/pretrain", "b", str(REPO / "conf" / "dataproc.yaml"), index="gs://b/dedup-index/")
    for job in data["jobs"]:
        assert job["pysparkJob"]["args"][-2:] == ["--set", "dedup.index=gs://b/dedup-index"]
    plain = render("gs://b/pretrain", "b", str(REPO / "conf" / "dataproc.yaml"))
    assert all("--set" not in job["pysparkJob"]["args"] for job in plain["jobs"])
    text = (REPO / "conf" / "dataproc.yaml").read_text().replace("{date}", "2026-01-02")
    config = load_config_text(text, [data["jobs"][0]["pysparkJob"]["args"][-1]])
    assert config.dedup.index == "gs://b/dedup-index"


def test_emr_steps_and_serverless_batches_get_the_index():
    out = _run(
        "deploy/emr/run.sh",
        "steps",
        "--bucket",
        "b",
        "--cluster-id",
        "j-1",
        "--date",
        "2026-11-22",
        "--index",
        "s3://b/dedup-index",
        "--dry-run",
    )
    steps = json.loads(out[: out.index("\n+ aws emr add-steps")])
    assert len(steps) == len(STAGE_NAMES)
    for step in steps:
        assert step["Args"][-4:] == ["--date", "2026-11-22", "--set", "dedup.index=s3://b/dedup-index"]
    out = _serverless_dry_run("--index", "gs://b/dedup-index")
    lines = [line for line in out.splitlines() if "batches submit pyspark" in line]
    assert len(lines) == len(STAGE_NAMES)
    assert all(line.endswith("--date 2026-11-22 --set dedup.index=gs://b/dedup-index") for line in lines)
    out = _serverless_dry_run()
    assert "dedup.index" not in out


def _serverless_dry_run(*extra: str) -> str:
    """What ``run_serverless.sh`` would submit for 2026-11-22, with ``extra`` arguments."""
    return _run(
        "deploy/dataproc/run_serverless.sh",
        "--bucket",
        "b",
        "--date",
        "2026-11-22",
        "--container-image",
        "img",
        *extra,
        "--dry-run",
    )


def test_the_commented_index_and_decontaminate_keys_of_the_cluster_configs_validate():
    for name in ("dataproc", "emr"):
        text = (REPO / "conf" / f"{name}.yaml").read_text().replace("{date}", "2026-01-02")
        lines = text.splitlines()
        start = lines.index("# decontaminate:")
        for i in range(start, start + 8):
            lines[i] = lines[i][2:]
        uncommented = "\n".join(line.replace("  # index:", "  index:") for line in lines)
        config = load_config_text(uncommented)
        assert config.dedup.index.endswith("://YOUR_BUCKET/dedup-index")
        assert config.decontaminate.references[0].text_field == "question" and config.decontaminate.ngram == 13
