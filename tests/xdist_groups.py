"""Which tests one pytest-xdist worker runs together (``-n 2 --dist loadfile``, the README's test command).

Each worker is its own process with its own local SparkSession, so a fixture is made once per worker that
needs it. As with xdist's own ``loadfile``, a test file goes to one worker whole (its module fixtures are
made once); on top of it, the files that read one whole-pipeline session run are one unit, so that run is
made once. (xdist's ``loadgroup`` marks would say the same, but xdist 3.8 cannot rename pytest 9's node ids.)
"""

from __future__ import annotations

import pytest

# Session fixtures that run the whole pipeline (tests/cluster_runs.py, tests/sample_runs.py), and the test
# files using each. A worker fails a test of an unlisted file before its fixtures (unlisted_shared_run).
SHARED_RUN_FILES: dict[str, tuple[str, ...]] = {
    "local_reference_run": (
        "tests/test_golden_outputs.py",
        "tests/test_numba_first_use.py",
        "tests/test_report_browser.py",
        "tests/test_report_explain.py",
        "tests/test_report_filter_browser.py",
        "tests/test_spark_submit.py",
        "tests/test_standalone_cluster.py",
    ),
    "sample_run": (
        "tests/test_object_storage_run.py",
        "tests/test_pipeline_run.py",
        "tests/test_run_safety.py",
    ),
}


def file_of(nodeid: str) -> str:
    """The test file part of a node id (``tests/test_x.py``)."""
    return nodeid.split("::", 1)[0]


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its shared run's name, or its file."""
    file = file_of(nodeid)
    return next((run for run, files in SHARED_RUN_FILES.items() if file in files), file)


def unlisted_shared_run(item: pytest.Item) -> str | None:
    """Why a test may not run on a worker: it uses a shared run from a file not listed with it (the run
    would be made on two workers); None when it may."""
    for run in SHARED_RUN_FILES:
        if run in getattr(item, "fixturenames", ()) and unit_of(item.nodeid) != run:
            return (
                f"{file_of(item.nodeid)} uses the {run} fixture: add it to SHARED_RUN_FILES[{run!r}] "
                "in tests/xdist_groups.py"
            )
    return None


def shared_run_scheduler(config: pytest.Config, log):
    """For ``--dist loadfile``: xdist's file scheduling with the files of a shared run as one unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedRunScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return SharedRunScheduling(config, log)
