"""Which tests one pytest-xdist worker runs together (``-n 2 --dist loadgroup``, the README's test command).

Each worker is its own process with its own local SparkSession, so a fixture is made once per worker that
needs it. A test module is one group (its module fixtures are made once, as with ``--dist loadfile``), and
every module using one of the expensive session runs below is in that run's group, so the run is made once.
"""

from __future__ import annotations

import pytest

# Session fixtures that run the whole pipeline (tests/cluster_runs.py, tests/sample_runs.py).
SHARED_RUNS = ("local_reference_run", "sample_run")


def module_of(item: pytest.Item) -> str:
    """The test file part of a node id (``tests/test_x.py``)."""
    return item.nodeid.split("::", 1)[0]


def group_names(items: list[pytest.Item]) -> dict[str, str]:
    """Test file -> group: the first of SHARED_RUNS any of its tests uses, else the file itself."""
    groups: dict[str, str] = {}
    for item in items:
        used = [name for name in SHARED_RUNS if name in getattr(item, "fixturenames", ())]
        if used and module_of(item) not in groups:
            groups[module_of(item)] = used[0]
    return {module_of(item): groups.get(module_of(item), module_of(item)) for item in items}


def mark_xdist_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every test its ``xdist_group`` mark when pytest-xdist is loaded (it registers the mark)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    groups = group_names(items)
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[module_of(item)]))
