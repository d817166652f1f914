"""The units of work of the pytest-xdist workers (tests/xdist_groups.py): a file whole, and the files using one
shared run (a session fixture declared with ``@shared_run``) together, found from the tests' fixtures."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.xdist_groups import (
    FIXTURES_FILE_KEY,
    SHARED_RUNS,
    configure_node,
    shared_run,
    shared_run_scheduler,
    unit_of,
    units_of_files,
    write_shared_runs,
)


def test_the_whole_pipeline_runs_are_declared_where_they_are_defined() -> None:
    import tests.cluster_runs
    import tests.sample_runs  # noqa: F401  (each declares its runs on import)

    assert {"sample_run", "local_reference_run"} <= SHARED_RUNS
    assert "spark" not in SHARED_RUNS and "standalone_config" not in SHARED_RUNS


def test_files_of_a_shared_run_are_one_unit_and_other_files_their_own() -> None:
    units = units_of_files(
        {
            "tests/e2e/test_a.py::test_x": ["sample_run"],
            "tests/e2e/test_a.py::test_y[p::q]": [],
            "tests/e2e/test_b.py::test_z": ["sample_run"],
            "tests/e2e/test_c.py::test_w": ["local_reference_run"],
        }
    )
    assert unit_of("tests/e2e/test_a.py::test_y[p::q]", units) == unit_of("tests/e2e/test_b.py::test_v", units)
    assert unit_of("tests/e2e/test_a.py::test_x", units) == "sample_run"
    assert unit_of("tests/e2e/test_c.py::test_w", units) == "local_reference_run"
    assert unit_of("tests/unit/config/test_d.py::test_d[a::b]", units) == "tests/unit/config/test_d.py"


def test_two_runs_used_by_one_file_are_one_unit_with_every_file_of_either() -> None:
    units = units_of_files(
        {
            "tests/e2e/test_a.py::t": ["sample_run"],
            "tests/e2e/test_b.py::t": ["local_reference_run", "sample_run"],
            "tests/e2e/test_c.py::t": ["local_reference_run"],
            "tests/e2e/test_d.py::t": ["other_run"],
        }
    )
    assert units == {
        "tests/e2e/test_a.py": "local_reference_run+sample_run",
        "tests/e2e/test_b.py": "local_reference_run+sample_run",
        "tests/e2e/test_c.py": "local_reference_run+sample_run",
        "tests/e2e/test_d.py": "other_run",
    }


class Node:
    """An xdist worker as the scheduler sees it (hashable, unlike SimpleNamespace)."""

    def __init__(self, config: object, workerinput: dict[str, object]) -> None:
        self.config, self.workerinput = config, workerinput


def test_a_new_shared_run_is_one_decorator(tmp_path, monkeypatch) -> None:
    """A fixture declared with @shared_run groups the files using it, through another fixture too, with no list
    to update: the worker writes what its tests use, the controller's scheduler reads it."""
    monkeypatch.setattr("tests.xdist_groups.SHARED_RUNS", set(SHARED_RUNS))

    @shared_run
    def new_run() -> None: ...

    node = SimpleNamespace(config=SimpleNamespace(), workerinput={"workerid": "gw0"})
    configure_node(node)
    worker = SimpleNamespace(workerinput=node.workerinput)
    items = [
        SimpleNamespace(nodeid="tests/e2e/test_new.py::test_x", fixturenames=["spark", "new_run_copy", "new_run"]),
        SimpleNamespace(nodeid="tests/e2e/test_new.py::test_y", fixturenames=["tmp_path"]),
        SimpleNamespace(nodeid="tests/e2e/test_old.py::test_z", fixturenames=["sample_run"]),
        SimpleNamespace(nodeid="tests/unit/run/test_u.py::test_u", fixturenames=["tmp_path"]),
    ]
    write_shared_runs(worker, items)  # type: ignore[arg-type]
    written = json.loads(open(node.workerinput[FIXTURES_FILE_KEY]).read())
    assert written == {"tests/e2e/test_new.py::test_x": ["new_run"], "tests/e2e/test_old.py::test_z": ["sample_run"]}

    options = {"dist": "loadfile", "tx": ["2*popen"]}
    config = SimpleNamespace(getvalue=options.__getitem__, option=SimpleNamespace(loadscopereorder=True))
    scheduler = shared_run_scheduler(config, log=None)  # type: ignore[arg-type]
    node = Node(node.config, node.workerinput)
    scheduler.add_node(node)
    scheduler.add_node_collection(node, [item.nodeid for item in items])
    assert scheduler._split_scope("tests/e2e/test_new.py::test_y") == "new_run"
    assert scheduler._split_scope("tests/e2e/test_old.py::test_z") == "sample_run"
    assert scheduler._split_scope("tests/unit/run/test_u.py::test_u") == "tests/unit/run/test_u.py"


def test_other_distributions_keep_xdist_s_scheduler() -> None:
    config = SimpleNamespace(getvalue=lambda name: "load")
    assert shared_run_scheduler(config, log=None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("run", ["sample_run", "local_reference_run"])
def test_every_file_using_a_shared_run_in_this_session_is_grouped_with_it(request, run) -> None:
    """Over this session's tests: the files using each run, as the scheduler would group them."""
    from tests.xdist_groups import shared_runs_of

    runs = {item.nodeid: used for item in request.session.items if (used := shared_runs_of(item.fixturenames))}
    units = units_of_files(runs)
    assert {unit_of(nodeid, units) for nodeid, used in runs.items() if run in used} <= {run}
