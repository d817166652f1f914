"""The bundled sample's run on ``conf/local.yaml`` (2 ingest splits, 2 tokenize shards), made once per test
session in the shared SparkSession: the reference that whole-run tests (test_pipeline_run.py,
test_run_safety.py, test_object_storage_run.py) compare with, read or copy, and the first run the filter
re-decision tests copy and re-decide (tests/spark/filter/test_filter_redecide*.py). Nobody writes into it.

The fixture is imported by ``tests/conftest.py``: a session fixture imported by several test modules
instead would be one fixture per module, and the run would be made once per module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.xdist_groups import shared_run

REPO = Path(__file__).resolve().parents[1]
# What every run compared with this one sets on top of conf/local.yaml (its paths are relative to REPO).
SAMPLE_SETS = ("spark.master=local[2]", "ingest.partitions=2", "tokenize.partitions=2")


@dataclass(frozen=True)
class SampleRun:
    """A finished run directory and what ``run_stages`` returned for it (stage name -> StageResult)."""

    path: Path
    results: dict[str, Any]


def sample_config(out: Path | str, overrides: tuple[str, ...] | list[str] = ()):
    """``conf/local.yaml`` with ``output=out``, ``SAMPLE_SETS`` and then ``overrides``."""
    from pipeline.config import load_config_text

    text = (REPO / "conf" / "local.yaml").read_text()
    return load_config_text(text, [f"output={out}", *SAMPLE_SETS, *overrides])


@pytest.fixture(scope="session")
@shared_run  # the files using it run on one xdist worker (tests/xdist_groups.py)
def sample_run(spark, tmp_path_factory) -> SampleRun:
    """The sample run, made from the repository root as the README's commands run it."""
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext

    out = tmp_path_factory.mktemp("sample-run") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        results = run_stages(RunContext(sample_config(out), spark=spark), log=lambda *_: None)
    return SampleRun(out, results)
