"""Under PIPELINE_REQUIRE_ORACLES=1 every skip that is not declared not applicable fails (tests/skip_gate.py,
issue #32 item 7), proven on a small test file run by pytest in a child process and read from its JUnit XML."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests import skip_gate
from tests.oracles import REQUIRE_ORACLES_ENV

REPO = Path(__file__).resolve().parents[2]

SKIPPING_TESTS = textwrap.dedent("""
    import pytest
    from tests.oracles import NOT_APPLICABLE, missing_tool, not_applicable

    def test_missing_tool():
        missing_tool("no frobnicator on this machine")

    def test_bare_skip():
        pytest.skip("no frobnicator either")

    @pytest.mark.skipif(True, reason="a fact of this machine")
    def test_skipif_marker():
        pass

    @pytest.mark.parametrize("x", [])
    def test_empty_parameters(x):
        pass

    def test_declared_not_applicable():
        not_applicable("Spark 4 only")

    @pytest.mark.skipif(True, reason=NOT_APPLICABLE + "CPython 3.12+ only")
    def test_declared_marker():
        pass

    def test_passes():
        assert 1 + 1 == 2
""")
MODULE_SKIP = 'import pytest\npytest.skip("no tool at import", allow_module_level=True)\n'


def run_pytest(tmp_path: Path, required: str | None) -> dict[str, tuple[str, str]]:
    """Outcome and message per test name (``module`` for the skipped module) from pytest's own JUnit XML."""
    (tmp_path / "test_tiny.py").write_text(SKIPPING_TESTS)
    (tmp_path / "test_module_skip.py").write_text(MODULE_SKIP)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_ORACLES_ENV}
    env["PYTHONPATH"] = str(REPO)
    if required is not None:
        env[REQUIRE_ORACLES_ENV] = required
    xml = tmp_path / f"junit-{required}.xml"
    cmd = [sys.executable, "-m", "pytest", "-p", "tests.skip_gate", "-p", "no:cacheprovider", "-p", "no:xdist"]
    cmd += ["-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), "--continue-on-collection-errors"]
    cmd += [f"--junitxml={xml}", str(tmp_path)]
    subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    outcomes = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        name = "module" if name == "test_module_skip" else name  # the module's collection report
        children = [c for c in case if c.tag in ("failure", "error", "skipped")]
        kind = ("skipped" if children[0].tag == "skipped" else "failed") if children else "passed"
        text = (children[0].get("message", "") + (children[0].text or "")) if children else ""
        outcomes[name] = (kind, text)
    return outcomes


def test_without_the_variable_every_skip_is_a_skip(tmp_path):
    outcomes = run_pytest(tmp_path, None)
    assert {name: kind for name, (kind, _) in outcomes.items()} == {
        "test_missing_tool": "skipped",
        "test_bare_skip": "skipped",
        "test_skipif_marker": "skipped",
        "test_empty_parameters": "skipped",
        "test_declared_not_applicable": "skipped",
        "test_declared_marker": "skipped",
        "test_passes": "passed",
        "module": "skipped",
    }


@pytest.mark.parametrize("value", ["1", "true"])
def test_under_the_variable_only_declared_skips_remain(tmp_path, value):
    outcomes = run_pytest(tmp_path, value)
    kinds = {name: kind for name, (kind, _) in outcomes.items()}
    assert kinds == {
        "test_missing_tool": "failed",
        "test_bare_skip": "failed",
        "test_skipif_marker": "failed",  # in setup: JUnit's <error>
        "test_empty_parameters": "failed",
        "test_declared_not_applicable": "skipped",
        "test_declared_marker": "skipped",
        "test_passes": "passed",
        "module": "failed",  # a collection error
    }
    assert "no frobnicator on this machine" in outcomes["test_missing_tool"][1]
    assert "no frobnicator either" in outcomes["test_bare_skip"][1]
    assert "a fact of this machine" in outcomes["test_skipif_marker"][1]
    assert "no tool at import" in outcomes["module"][1]


def test_this_suite_runs_under_the_gate(request):
    """tests/conftest.py loads the gate for the whole suite, not only the child runs above."""
    hooks = request.config.pluginmanager.hook
    assert skip_gate.pytest_runtest_makereport in [h.function for h in hooks.pytest_runtest_makereport.get_hookimpls()]
    assert skip_gate.pytest_make_collect_report in [
        h.function for h in hooks.pytest_make_collect_report.get_hookimpls()
    ]


def test_ci_sets_the_variable():
    assert f"export {REQUIRE_ORACLES_ENV}=1" in (REPO / ".ci" / "run").read_text()
