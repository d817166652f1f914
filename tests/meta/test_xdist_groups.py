"""The units of work of the pytest-xdist workers (tests/xdist_groups.py): a file whole, the files of a shared run
together, and no file using a shared run left out of its list."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.xdist_groups import SHARED_RUN_FILES, unit_of, unlisted_shared_run


def test_files_of_a_shared_run_are_one_unit_and_other_files_their_own() -> None:
    assert unit_of("tests/test_pipeline_run.py::test_a") == unit_of("tests/test_run_safety.py::test_b[x-y]")
    assert unit_of("tests/test_pipeline_run.py::test_a") == "sample_run"
    assert unit_of("tests/test_spark_submit.py::test_c") == "local_reference_run"
    assert unit_of("tests/test_config.py::test_d[a::b]") == "tests/test_config.py"
    listed = [file for files in SHARED_RUN_FILES.values() for file in files]
    assert len(listed) == len(set(listed)), "a file is listed with two shared runs"


def test_a_test_using_a_shared_run_from_an_unlisted_file_is_named() -> None:
    stray = SimpleNamespace(nodeid="tests/test_new.py::test_x", fixturenames=["spark", "sample_run"])
    why = unlisted_shared_run(stray)  # type: ignore[arg-type]
    assert why is not None and "tests/test_new.py" in why and "sample_run" in why
    listed = SimpleNamespace(nodeid="tests/test_run_safety.py::test_y", fixturenames=["sample_run"])
    assert unlisted_shared_run(listed) is None  # type: ignore[arg-type]
    other = SimpleNamespace(nodeid="tests/test_run_safety.py::test_z", fixturenames=["local_reference_run"])
    assert unlisted_shared_run(other) is not None  # type: ignore[arg-type]


def test_every_collected_test_using_a_shared_run_is_listed_with_it(request: pytest.FixtureRequest) -> None:
    """Over this session's tests (all of them in a whole run): the list holds every file using a shared run."""
    assert [why for item in request.session.items if (why := unlisted_shared_run(item))] == []
