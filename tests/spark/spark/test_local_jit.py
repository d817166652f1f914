"""A local-mode JVM runs with C1 only (pipeline.spark.session.LOCAL_JIT) unless the user chose a JIT."""

from __future__ import annotations

import pytest

from pipeline.spark.session import LOCAL_JIT, local_java_options


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2,3]"])
def test_local_masters_get_c1_only(master):
    assert local_java_options(master, None) == "-XX:TieredStopAtLevel=1"
    assert local_java_options(master, "-Dfoo=1") == "-XX:TieredStopAtLevel=1 -Dfoo=1"


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "yarn", "local-cluster[2,1,1024]", "k8s://h:443"])
def test_other_masters_keep_the_users_options(master):
    assert local_java_options(master, None) is None
    assert local_java_options(master, "-Dfoo=1") == "-Dfoo=1"


@pytest.mark.parametrize("own", ["-XX:TieredStopAtLevel=4", "-XX:-TieredCompilation -Dfoo=1"])
def test_a_users_own_jit_choice_wins(own):
    assert local_java_options("local[2]", own) == own


def test_the_shared_local_session_jvm_runs_with_it(spark):
    """The JVM behind the tests' local[2,3] session was started with the flag (its own input arguments)."""
    jvm = spark.sparkContext._jvm
    arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert LOCAL_JIT in arguments
    assert LOCAL_JIT in spark.sparkContext.getConf().get("spark.driver.extraJavaOptions")
