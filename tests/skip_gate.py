"""The safety net under ``PIPELINE_REQUIRE_ORACLES=1`` (CI): any skip not declared "not applicable" fails.

Missing oracles and tools go through ``tests/oracles.py`` and fail there already; this plugin catches every
other way a test can skip (a bare ``pytest.skip``, a ``skipif`` marker, a module-level skip, an empty
parametrization), so CI's skip count cannot depend on the machine (issue #32, 7). The deliberate skips
(``not_applicable`` and markers whose reason starts with ``NOT_APPLICABLE``) stay allowed; tests/meta/test_oracles.py
lists them. ``tests/conftest.py`` loads it; ``pytest -p tests.skip_gate`` loads it anywhere.
"""

from __future__ import annotations

import pytest

from tests.oracles import NOT_APPLICABLE, REQUIRE_ORACLES_ENV, oracles_required


def undeclared_skip(excinfo: pytest.ExceptionInfo[BaseException] | None) -> str | None:
    """The reason of a skip that is not declared not applicable, or None (no skip, or a deliberate one)."""
    if excinfo is None or not excinfo.errisinstance(pytest.skip.Exception):
        return None
    reason = str(getattr(excinfo.value, "msg", "") or excinfo.value)
    return None if reason.startswith(NOT_APPLICABLE) else reason


def _as_failure(report: pytest.TestReport | pytest.CollectReport, reason: str) -> None:
    report.outcome = "failed"
    report.longrepr = (
        f"skipped without being declared not applicable ({REQUIRE_ORACLES_ENV}=1 makes every other skip a "
        f"failure; tests/oracles.py): {reason}"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """A test's skip in setup, call or teardown becomes a failure under the variable unless declared."""
    report = yield
    reason = undeclared_skip(call.excinfo) if oracles_required() and report.skipped else None
    if reason is not None and not hasattr(report, "wasxfail"):
        _as_failure(report, reason)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    """A whole module skipped at import (``allow_module_level=True``) fails the same way."""
    report = yield
    if oracles_required() and report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        if not reason.startswith(NOT_APPLICABLE):
            _as_failure(report, reason)
    return report
