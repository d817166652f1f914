"""The driver imports pandas (PySpark's first ``mapInArrow`` needs it) while the JVM starts, in a thread that has
finished when the session is returned (pipeline/spark/session.py)."""

from __future__ import annotations

import sys
import threading

from pipeline.spark import session


def test_preload_thread_is_done_when_the_session_is_returned(spark):
    assert "pandas" in session.PRELOADED
    assert "pandas" in sys.modules
    assert not [t for t in threading.enumerate() if t.name == "pipeline-preload"]


def test_preload_imports_in_order_and_passes_over_a_missing_module(monkeypatch):
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    thread = session._import_in_background(("pipeline_no_such_module", "colorsys"))
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert "colorsys" in sys.modules
