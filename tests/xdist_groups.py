"""Which tests one pytest-xdist worker runs together (``-n 2 --dist loadfile``, the README's test command).

Each worker is its own process with its own local SparkSession, so a fixture is made once per worker that
needs it. As with xdist's own ``loadfile``, a test file goes to one worker whole (its module fixtures are
made once); on top of it, the files that use one whole-pipeline session run are one unit, so that run is
made once. A session fixture says it is such a run with ``@shared_run`` where it is defined
(tests/sample_runs.py, tests/cluster_runs.py); which files use it is read from the collected tests' fixture
closures (``item.fixturenames``), which the workers hand to the controller's scheduler in a file.
(xdist's ``loadgroup`` marks would say the same by hand, but xdist 3.8 cannot rename pytest 9's node ids.)
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])

SHARED_RUNS: set[str] = set()  # names of the session fixtures declared with @shared_run
FIXTURES_FILE_KEY = "shared_run_fixtures_file"  # workerinput key: where a worker writes its tests' shared runs


def shared_run(fixture_function: F) -> F:
    """Declare a session fixture as a whole-pipeline run that its test files share: every file using it
    (directly or through another fixture) runs on one xdist worker, so the run is made once. Put it under
    ``@pytest.fixture(scope="session")``."""
    SHARED_RUNS.add(fixture_function.__name__)
    return fixture_function


def file_of(nodeid: str) -> str:
    """The test file part of a node id (``tests/unit/x/test_x.py``)."""
    return nodeid.split("::", 1)[0]


def shared_runs_of(fixturenames: Iterable[str]) -> list[str]:
    """The shared runs among a test's fixtures (its whole closure), sorted."""
    return sorted(SHARED_RUNS.intersection(fixturenames))


def units_of_files(runs_by_test: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each test file using a shared run -> its unit's name: the files of one run are one unit, and two runs
    used by one file (or chained through files) are one unit named after all of them."""
    parent: dict[str, str] = {}

    def root(run: str) -> str:
        while parent.setdefault(run, run) != run:
            run = parent[run]
        return run

    runs_by_file: dict[str, set[str]] = {}
    for nodeid, runs in runs_by_test.items():
        runs_by_file.setdefault(file_of(nodeid), set()).update(runs)
    for runs in runs_by_file.values():
        if not runs:
            continue
        first, *others = sorted(runs)
        root(first)
        for other in others:
            parent[root(other)] = root(first)
    members: dict[str, set[str]] = {}
    for run in list(parent):
        members.setdefault(root(run), set()).add(run)
    name = {top: "+".join(sorted(runs)) for top, runs in members.items()}
    return {file: name[root(min(runs))] for file, runs in runs_by_file.items() if runs}


def unit_of(nodeid: str, units: Mapping[str, str]) -> str:
    """The unit of work a test belongs to: its shared run's unit, or its file."""
    file = file_of(nodeid)
    return units.get(file, file)


def configure_node(node: Any) -> None:
    """Controller side (``pytest_configure_node``): tell the worker where to write its tests' shared runs."""
    config = node.config
    folder = getattr(config, "_shared_run_folder", None)
    if folder is None:
        folder = tempfile.mkdtemp(prefix="pytest-shared-runs-")
        config._shared_run_folder = folder
    node.workerinput[FIXTURES_FILE_KEY] = str(Path(folder) / f"{node.workerinput['workerid']}.json")


def write_shared_runs(config: pytest.Config, items: Sequence[pytest.Item]) -> None:
    """Worker side, after collection: the node ids of the tests using a shared run and those runs."""
    target = getattr(config, "workerinput", {}).get(FIXTURES_FILE_KEY)
    if target is None:
        return
    runs = {item.nodeid: used for item in items if (used := shared_runs_of(getattr(item, "fixturenames", ())))}
    Path(target).write_text(json.dumps(runs))


def shared_run_scheduler(config: pytest.Config, log: Any) -> Any:
    """For ``--dist loadfile``: xdist's file scheduling with the files of a shared run as one unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedRunScheduling(LoadFileScheduling):  # type: ignore[misc]
        units: dict[str, str] = {}

        def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
            written = Path(node.workerinput[FIXTURES_FILE_KEY])
            if not self.units and written.is_file():
                self.units = units_of_files(json.loads(written.read_text()))
            super().add_node_collection(node, collection)

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid, self.units)

    return SharedRunScheduling(config, log)
