"""The runtime speed-ups are opt-in by name (``spark.speedups``, pipeline.spark.speedups): none is on by default, an
unknown name is one ConfigError naming the key, and a task turns on only the task-side ones it was given."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from pipeline.config import ConfigError, load_config_text
from pipeline.config.schema import SPEEDUPS
from pipeline.spark.speedups import ENV, checked, forward
from pipeline.spark.speedups.zip_rescans import needs_fix
from tests.config_texts import config_text, write_jsonl

REPO = Path(__file__).resolve().parents[3]


def test_none_is_on_by_default_and_names_are_checked_before_spark(tmp_path):
    base = config_text(write_jsonl(tmp_path), sources={"web": "weight: 1"})
    assert load_config_text(base).spark.speedups == []
    chosen = load_config_text(base, ["spark.speedups=[gc_freeze, class_archive]"]).spark.speedups
    assert chosen == ["gc_freeze", "class_archive"]
    with pytest.raises(ConfigError) as err:
        load_config_text(base, ["spark.speedups=[gc_freeze, jit_magic]"])
    assert err.value.key == "spark.speedups" and "jit_magic" in str(err.value) and "\n" not in str(err.value)


def test_build_session_refuses_an_unknown_name_naming_the_key():
    assert checked(iter(SPEEDUPS)) == SPEEDUPS
    with pytest.raises(ConfigError) as err:
        checked(["gc_freeze", "turbo"])
    assert err.value.key == "spark.speedups" and "'turbo'" in str(err.value)


def test_only_the_task_side_ones_travel_to_the_tasks():
    session = SimpleNamespace(sparkContext=SimpleNamespace(environment={}))
    assert forward(session, SPEEDUPS) == "zip_rescans,gc_freeze"
    assert session.sparkContext.environment == {ENV: "zip_rescans,gc_freeze"}
    forward(session, [])
    assert session.sparkContext.environment == {ENV: ""}


TASK = textwrap.dedent("""
    import gc, zipimport
    from pipeline.spark.worker_task import per_task

    def body(batches):
        patched = zipimport.zipimporter.invalidate_caches.__module__ == "pipeline.spark.speedups.zip_rescans"
        yield gc.get_freeze_count() > 0, patched

    print(*next(per_task(body)(iter([]))))
""")


@pytest.mark.parametrize(
    "given, frozen, patched",
    [(None, False, False), ("", False, False), ("gc_freeze", True, False), ("zip_rescans,gc_freeze", True, True)],
)
def test_a_task_turns_on_only_what_it_was_given(given, frozen, patched):
    """In a fresh interpreter, as a Python worker runs a task: the freeze and the zip patch are process-wide."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(ENV, None)
    if given is not None:
        env[ENV] = given
    out = subprocess.run([sys.executable, "-c", TASK], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [str(frozen), str(patched and needs_fix())]
