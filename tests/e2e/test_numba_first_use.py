"""When a kernel is worth loading (pipeline.numba_backend.NumbaSwitch.use): small inputs stay on the Python path.

The rest of the suite runs with ``PIPELINE_NUMBA_AFTER=0`` (tests/conftest.py), so that the kernels run on
small inputs too; these tests set the variable themselves or remove it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.numba_backend import AFTER_VAR, NumbaSwitch
from tests.cluster_runs import SMALL_OVERRIDES, file_digests
from tests.oracles import require_oracle

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def switch(monkeypatch) -> NumbaSwitch:
    require_oracle("numba")
    monkeypatch.setenv(AFTER_VAR, "100")
    monkeypatch.delenv("PIPELINE_TEST_NUMBA", raising=False)
    return NumbaSwitch("PIPELINE_TEST_NUMBA")


def test_a_kernel_is_used_once_its_python_path_has_taken_the_threshold(switch):
    assert [switch.use("k", 40) for _ in range(3)] == [False, False, True]  # 40, 80, then 120 >= 100
    assert switch.use("k", 1) is True  # from then on, whatever the size
    assert switch.use("other", 99) is False  # each kernel counts its own input
    assert switch.use("large", 100) is True  # a call of the threshold's size uses it at once


def test_forcing_uses_the_kernel_at_any_size_and_restoring_brings_the_threshold_back(switch):
    previous = switch.set(True)
    assert previous is None and switch.use("k", 1) is True
    switch.set(previous)
    assert switch.use("k", 1) is False
    assert switch.set(False) is None and switch.use("k", 10**9) is False
    switch.set(None)
    assert switch.use("k", 10**9) is True


def test_the_family_switched_off_never_uses_it(switch, monkeypatch):
    monkeypatch.setenv("PIPELINE_TEST_NUMBA", "0")
    assert switch.use("k", 10**9) is False


def test_zero_uses_the_kernel_from_the_first_call(switch, monkeypatch):
    monkeypatch.setenv(AFTER_VAR, "0")
    assert switch.use("k", 0) is True


def test_a_per_kernel_threshold_replaces_the_default(switch):
    assert switch.use("k", 150, after=200) is False  # above the default (100), below its own threshold
    assert switch.use("k", 60, after=200) is True  # 210 >= 200
    assert switch.use("other", 1, after=0) is True


def test_numba_is_not_imported_below_the_threshold():
    require_oracle("numba")
    code = (
        "import sys\n"
        "from pipeline.numba_backend import NumbaSwitch\n"
        "s = NumbaSwitch('PIPELINE_TEST_NUMBA')\n"
        "below = s.use('k', 10, after=100)\n"
        "print(below, 'numba' in sys.modules, s.use('k', 90, after=100), 'numba' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PIPELINE_TEST_NUMBA"}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["False", "False", "True", "True"]


def _kernel_files(cache: Path, family: str) -> list[str]:
    """Names of numba cache files of one kernel package (``dedup``, ``tokenizer``, ``blend``) under ``cache``."""
    return sorted(p.name for p in cache.rglob("*.nb[ic]") if family in str(p.relative_to(cache)))


@pytest.mark.slow
@pytest.mark.same_plan  # the reference run's plans; only which Python path the UDFs take differs (not the plan)
def test_a_sample_run_with_the_default_compiles_no_dedup_or_encoder_kernel_and_writes_the_same_files(
    local_reference_run, standalone_config, tmp_path
):
    """``python -m pipeline run`` with production's default in a fresh numba cache: dedup and the encoder
    stay on their Python paths (no kernel of theirs is compiled), and every file the trainer and the
    tokenizer user read is byte-identical to the reference run's, whose kernels all ran compiled."""
    require_oracle("numba")
    out, cache = tmp_path / "run", tmp_path / "numba-cache"
    env = {k: v for k, v in os.environ.items() if k != AFTER_VAR}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    overrides = [a for o in [f"output={out}", *SMALL_OVERRIDES] for a in ("--set", o)]
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "run", "--config", str(standalone_config), *overrides],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert _kernel_files(cache, "dedup") == [] and _kernel_files(cache, "tokenizer") == []
    assert file_digests(out) == file_digests(local_reference_run)
    for name in ("vocab.json", "merges.txt", "tokenizer.json"):
        ours, reference = (
            hashlib.sha256((run / "tokenizer" / name).read_bytes()).digest() for run in (out, local_reference_run)
        )
        assert ours == reference, name
