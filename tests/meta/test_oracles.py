"""The oracle helper: a missing oracle skips with the reason locally and fails in CI (PIPELINE_REQUIRE_ORACLES=1)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.oracles import REQUIRE_ORACLES_ENV, oracles_required, require_oracle

TESTS = Path(__file__).resolve().parents[1]
ABSENT = "pipeline_oracle_that_does_not_exist"


def test_present_oracle_is_returned(monkeypatch):
    monkeypatch.setenv(REQUIRE_ORACLES_ENV, "1")
    assert require_oracle("json.decoder").__name__ == "json.decoder"


def test_missing_oracle_skips_with_the_package_to_install(monkeypatch):
    monkeypatch.delenv(REQUIRE_ORACLES_ENV, raising=False)
    assert not oracles_required()
    with pytest.raises(pytest.skip.Exception, match=f"oracle {ABSENT}.*pip install '{ABSENT}'"):
        require_oracle(ABSENT)


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_missing_oracle_fails_when_oracles_are_required(monkeypatch, value):
    monkeypatch.setenv(REQUIRE_ORACLES_ENV, value)
    with pytest.raises(pytest.fail.Exception, match=f"{ABSENT}.*{REQUIRE_ORACLES_ENV}=1"):
        require_oracle(ABSENT)
    with pytest.raises(pytest.fail.Exception, match="pip install 'megatron-core'"):
        require_oracle("megatron.core_no_such_submodule")


def test_no_test_imports_an_oracle_around_the_helper():
    """``pytest.importorskip`` or a skip on ImportError would turn a broken oracle install into a silent skip."""
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in ("oracles.py", Path(__file__).name):
            continue
        text = path.read_text()
        if "importorskip(" in text or re.search(
            r"except (ImportError|ModuleNotFoundError)[^\n]*:\s*\n\s*pytest\.skip", text
        ):
            offenders.append(path.name)
    assert offenders == []


# the only skips left, all declared not applicable (tests/skip_gate.py lets them through in CI): the user switched a
# backend off, the platform needs no fix, no GraphFrames build for Spark 4
NOT_APPLICABLE_SKIPS = {
    "backends.py": 1,
    "test_tokenizer_backends.py": 1,
    "test_tokenizer_train_patterns.py": 1,
    "conftest.py": 1,
    "test_zip_rescans.py": 1,
    "test_local_daemon.py": 1,  # reads /proc/PID/maps: Linux only
}
GATE_FILES = ("oracles.py", "skip_gate.py", "test_skip_gate.py", Path(__file__).name)


def test_a_missing_tool_fails_in_ci_and_every_other_skip_is_listed(monkeypatch):
    """Under PIPELINE_REQUIRE_ORACLES=1 a missing tool or file (../shared, Java, spark-submit, fake-gcs-server,
    shellcheck, Chromium) fails, so CI's skip count does not depend on the machine (issue #32, 7)."""
    from tests.oracles import missing_tool

    monkeypatch.setenv(REQUIRE_ORACLES_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="no shellcheck.*a missing tool is a failure"):
        missing_tool("no shellcheck")
    monkeypatch.setenv(REQUIRE_ORACLES_ENV, "0")
    with pytest.raises(pytest.skip.Exception, match="no shellcheck"):
        missing_tool("no shellcheck")
    found, bare = {}, []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in GATE_FILES:
            continue
        text = path.read_text()
        count = len(re.findall(r"not_applicable\(|mark\.skipif\(", text))
        if count:
            found[path.name] = count
        markers = [m.group(0) for m in re.finditer(r"skipif\(.*?(?:\n\)|\)\n)", text, re.S)]
        if "pytest.skip(" in text or any("NOT_APPLICABLE" not in m for m in markers):
            bare.append(path.name)
    assert found == NOT_APPLICABLE_SKIPS
    assert bare == []  # a skip goes through missing_tool, missing_oracle or not_applicable
