"""The Java 17 prerequisite is checked before Spark starts, with install instructions."""

from __future__ import annotations

import os
import stat

import pytest

from pipeline.spark.session import JavaMissingError, build_session, check_java
from tests.oracles import missing_tool


def test_missing_java_says_how_to_install_it(tmp_path, monkeypatch):
    for var in ("JAVA_HOME", "PYSPARK_GATEWAY_PORT", "SPARK_SUBMIT_OPTS", "SPARK_ENV_LOADED"):
        monkeypatch.delenv(var, raising=False)  # not under spark-submit: the local path checks Java
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JavaMissingError, match="openjdk-17"):
        check_java()
    with pytest.raises(JavaMissingError):
        build_session("x", master="local[1]")


def test_old_java_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(JavaMissingError, match="needs Java 17"):
        check_java()


def test_this_machines_java_passes():
    if not (
        os.environ.get("JAVA_HOME")
        or any(os.access(os.path.join(p, "java"), os.X_OK) for p in os.environ.get("PATH", "").split(os.pathsep))
    ):
        missing_tool("no java on this machine")
    assert "version" in check_java()
