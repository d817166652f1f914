"""An error that stops a run is one line on stderr naming the cause and the key or path, with exit code 2
for usage/config errors and 1 otherwise; every error class derives from PipelineError (issue 14, item 10)."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pipeline
from pipeline.cli.commands import main
from pipeline.errors import PipelineError, UsageError

REPO = Path(__file__).resolve().parents[3]
LOGGER_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARNING) pipeline(\.[\w]+)*: ")


def _error_lines(err: str) -> list[str]:
    """stderr without the ``pipeline`` logger's progress lines (time level name: message)."""
    return [line for line in err.splitlines() if line.strip() and not LOGGER_LINE.match(line)]


def _run_main(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    lines = _error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return code, lines[0]


def test_every_error_class_in_the_package_derives_from_pipeline_error():
    found = {}
    for info in pkgutil.walk_packages(pipeline.__path__, "pipeline."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    assert "pipeline.ingest.stage.DocIdCollisionError" in found and len(found) >= 10, sorted(found)
    strays = [name for name, cls in found.items() if not issubclass(cls, PipelineError)]
    assert strays == []
    for usage in (
        "pipeline.config.errors.ConfigError",
        "pipeline.blend.indices.OversampleError",
        "pipeline.cli.schedule.ScheduleError",
    ):
        assert issubclass(found[usage], UsageError) and found[usage].exit_code == 2


def test_output_that_is_an_existing_file_is_a_config_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    target = tmp_path / "not-a-dir"
    target.write_text("x")
    code, line = _run_main(["ingest", "--config", "conf/local.yaml", "--set", f"output={target}"], capsys)
    assert code == 2
    assert "'output'" in line and str(target) in line and "existing file" in line
    assert target.read_text() == "x"


def test_unwritable_output_directory_is_a_config_error(tmp_path, monkeypatch, capsys):
    """Root may write anywhere on a disk, so as root the output is under /sys (mkdir refused even for root)."""
    monkeypatch.chdir(REPO)
    if os.geteuid() == 0:
        out = Path("/sys/pipeline-test-run")
    else:
        (tmp_path / "ro").mkdir(mode=0o555)
        out = tmp_path / "ro" / "run"
    code, line = _run_main(["ingest", "--config", "conf/local.yaml", "--set", f"output={out}"], capsys)
    assert code == 2
    assert "'output'" in line and "cannot write" in line and str(out) in line
    assert not out.exists()


def test_bad_spark_master_is_refused_before_spark_starts(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    code, line = _run_main(
        [
            "ingest",
            "--config",
            "conf/local.yaml",
            "--set",
            f"output={tmp_path / 'run'}",
            "--set",
            "spark.master=nonsense-master",
        ],
        capsys,
    )
    assert code == 2 and "'spark.master'" in line and "'nonsense-master' is not a Spark master URL" in line


def test_spark_s_own_reason_for_refusing_a_master_is_the_error_line(tmp_path):
    """A fresh process (the test session's SparkSession would be reused otherwise). Spark's JVM logs its
    own stack trace; the CLI's error line names the key and the JVM's root cause."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "ingest",
            "--config",
            "conf/local.yaml",
            "--set",
            f"output={tmp_path / 'run'}",
            "--set",
            "spark.master=local[0]",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    lines = [line for line in _error_lines(done.stderr) if line.startswith("error:")]
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(lines) == 1 and "Traceback (most recent call last)" not in done.stderr, done.stderr[-3000:]
    assert "'spark.master'" in lines[0] and "Asked to run locally with 0 threads" in lines[0]


def test_missing_pyspark_is_reported_by_package_name(tmp_path):
    blocked = "import runpy, sys; sys.modules['pyspark'] = None; runpy.run_module('pipeline', run_name='__main__')"
    argv = ["ingest", "--config", "conf/local.yaml", "--set", f"output={tmp_path / 'run'}"]
    done = subprocess.run(
        [sys.executable, "-c", blocked, *argv], cwd=REPO, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    lines = _error_lines(done.stderr)
    assert done.returncode == 1, done.stderr[-2000:]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "pyspark is not installed: pip install pyspark" in lines[0] and "not built yet" not in lines[0]
    assert not (tmp_path / "run" / "_run.lock").exists()


def test_missing_java_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    empty = tmp_path / "jdk"
    (empty / "bin").mkdir(parents=True)
    monkeypatch.setenv("JAVA_HOME", str(empty))
    for name in ("SPARK_SUBMIT_OPTS", "SPARK_ENV_LOADED", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(name, raising=False)
    code, line = _run_main(["ingest", "--config", "conf/local.yaml", "--set", f"output={tmp_path / 'run'}"], capsys)
    assert code == 1 and "Java was not found" in line and "openjdk-17" in line


@pytest.mark.parametrize(
    "make, code, words",
    [
        (
            lambda: __import__("pipeline.ingest.stage", fromlist=["x"]).DocIdCollisionError("doc_id collision in web"),
            1,
            "doc_id collision in web",
        ),
        (
            lambda: __import__("pipeline.blend.indices", fromlist=["x"]).OversampleError("blend.size: too large"),
            2,
            "blend.size: too large",
        ),
        (
            lambda: __import__("pipeline.megatron.format", fromlist=["x"]).IndexedDatasetError("shards/web/x.idx: bad"),
            1,
            "shards/web/x.idx: bad",
        ),
        (
            lambda: __import__("pipeline.run.accounting", fromlist=["x"]).AccountingError("web: read 3 != 2"),
            1,
            "read 3",
        ),
        (lambda: RuntimeError("an unexpected\nmulti-line failure"), 1, "RuntimeError: an unexpected multi-line"),
    ],
)
def test_errors_raised_by_stages_are_one_line_with_their_exit_code(make, code, words, tmp_path, monkeypatch, capsys):
    import pipeline.cli.commands as cli

    def fail(*_args, **_kwargs):
        raise make()

    monkeypatch.chdir(REPO)
    monkeypatch.setattr(cli, "run_stages", fail)
    got, line = _run_main(["run", "--config", "conf/local.yaml", "--set", f"output={tmp_path / 'run'}"], capsys)
    assert got == code and words in line
    assert not (tmp_path / "run" / "_run.lock").exists()  # released on failure


def test_debug_prints_the_traceback(tmp_path, monkeypatch, capsys):
    import pipeline.cli.commands as cli

    def fail(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.chdir(REPO)
    monkeypatch.setattr(cli, "run_stages", fail)
    assert main(["run", "--config", "conf/local.yaml", "--set", f"output={tmp_path / 'run'}", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_job_entry_point_with_an_unreadable_config_is_one_line(tmp_path, capsys):
    from pipeline.cli.schedule import job_main

    missing = tmp_path / "missing.yaml"
    code = job_main("run", ["--config", str(missing)])
    lines = _error_lines(capsys.readouterr().err)
    assert code == 2 and len(lines) == 1
    assert "--config" in lines[0] and str(missing) in lines[0]


# ---- issue 46: errors that came late or raw


class _NoSpark:
    """A session that fails the test when a stage touches it: the check must come before any Spark job."""

    def __getattr__(self, name):
        raise AssertionError(f"Spark was used (spark.{name}) before the error was found")


def _training_run(tmp_path, documents: int, training: str):
    """A run directory holding one source's merged dataset (``documents`` of 20 tokens) and its blend."""
    import numpy as np

    from pipeline.blend.indices import build_blending_indices
    from pipeline.blend.io import write_blend
    from pipeline.config import load_config_text
    from pipeline.megatron import IndexedDatasetWriter

    run = tmp_path / "run"
    with IndexedDatasetWriter(str(run / "megatron" / "a"), dtype=np.uint16) as writer:
        for i in range(documents):
            writer.add_document(np.full(20, i, dtype=np.uint16))
    index, sample = build_blending_indices([1.0], 10, sizes=[documents], oversample="wrap")
    write_blend(
        str(run / "blend"), index, sample, sources=["a"], prefixes=["megatron/a"], weights=[1.0],
        sizes=[documents], mode="fixed", oversample="wrap",
    )  # fmt: skip
    return load_config_text(
        f"output: {run}\nsources:\n  - name: a\n    paths: [x.jsonl]\ntokenizer: {{train: true}}\n"
        f"training:\n  tokenizer: {{class: t}}\n  sequence_length: 8\n{training}"
    )


def test_an_empty_training_split_is_one_line_before_the_spark_job(tmp_path):
    """Issue 46, item 7: 10 documents split 98/2/0 leave the valid split no document; asking it 1 sample was a
    Py4JJavaError whose reason was inside the worker's traceback. It is found on the driver, from the ``.idx``
    header, before Spark is touched; megatron-core's own builder would loop for ever there (no tokens per epoch)."""
    from pipeline.cli.commands import describe
    from pipeline.stage_api.context import RunContext
    from pipeline.stage_api.stage import Data
    from pipeline.training_indices.stage import STAGE

    config = _training_run(tmp_path, 10, "  split: '98,2,0'\n  samples: [10, 1, 0]\n")
    with pytest.raises(PipelineError) as err:
        STAGE.run(
            RunContext(config, spark=_NoSpark()),
            {"blend": Data("blend", "merge-blend"), "megatron": Data("megatron", "merge-blend")},
        )
    line, code = describe(err.value)
    assert code == 1 and "\n" not in line
    assert line.startswith("source 'a', valid split (documents (10, 10) of 10): the split has no tokens but 1 samples")
    assert "training.split" in line
    assert not (tmp_path / "run" / "megatron_cache").exists()  # nothing was written or removed


def test_a_training_split_with_documents_passes_the_driver_check(tmp_path):
    """The same run split 90/10/0 (one valid document): the check lets it through to the Spark job."""
    from pipeline.stage_api.context import RunContext
    from pipeline.stage_api.stage import Data
    from pipeline.training_indices.stage import STAGE

    config = _training_run(tmp_path, 10, "  split: '90,10,0'\n  samples: [10, 1, 0]\n")
    with pytest.raises(AssertionError, match="Spark was used"):
        STAGE.run(
            RunContext(config, spark=_NoSpark()),
            {"blend": Data("blend", "merge-blend"), "megatron": Data("megatron", "merge-blend")},
        )


@contextlib.contextmanager
def _read_only(directory: Path):
    """``directory`` made read-only for this process: mode 0555, or as root (who writes anyway) immutable."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    done = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, text=True)
    if done.returncode != 0:
        from tests.oracles import missing_tool

        missing_tool(f"running as root and chattr +i is refused here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_an_unwritable_stage_directory_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    """Issue 46, item 9: a stage directory left read-only in the run directory (here documents/, ingest's) was a
    Py4JJavaError 'Unable to clear output directory' after ingest's job; it is refused before the stage runs,
    naming the directory, and what it holds is left alone."""
    import pipeline.run.runner as runner

    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    (out / "documents").mkdir(parents=True)
    (out / "documents" / "part-0.parquet").write_text("kept")

    def no_stage_may_run(*args, **kwargs):
        raise AssertionError("a stage ran")

    monkeypatch.setattr(runner, "_run_one", no_stage_may_run)
    with _read_only(out / "documents"):
        code, line = _run_main(["ingest", "--config", "conf/local.yaml", "--set", f"output={out}"], capsys)
    assert code == 2 and "'output'" in line and f"{out / 'documents'}' is not writable" in line
    assert "stage 'ingest'" in line
    assert (out / "documents" / "part-0.parquet").read_text() == "kept"


def test_a_file_where_a_stage_directory_goes_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    """Issue 46, item 9, re-probed as root (modes do not stop root): a file where a stage's directory goes (here
    dedup/) was a Py4JJavaError 'ParentNotDirectoryException' after the stages before it ran; it is refused before
    any stage runs, naming the path, and the file is left alone."""
    import pipeline.run.runner as runner

    monkeypatch.chdir(REPO)
    out = tmp_path / "run"
    out.mkdir()
    (out / "dedup").write_text("in the way")

    def no_stage_may_run(*args, **kwargs):
        raise AssertionError("a stage ran")

    monkeypatch.setattr(runner, "_run_one", no_stage_may_run)
    code, line = _run_main(["run", "--config", "conf/local.yaml", "--set", f"output={out}"], capsys)
    assert code == 2 and "'output'" in line and f"{out / 'dedup'}' (stage 'dedup'" in line and "not a directory" in line
    assert (out / "dedup").read_text() == "in the way"


@pytest.mark.spark
def test_spark_errors_are_reduced_to_their_cause(spark, tmp_path):
    """A pipeline error raised inside a Spark task reaches the driver as Spark's error holding the task's traceback:
    the line is the task's message. Spark refusing to replace a read-only table names the directory."""
    from pipeline.cli.commands import describe

    def _raise_in_task(_rows):  # nested: shipped by value (the workers cannot import this test module)
        raise PipelineError("source 'a', valid split (documents (10, 10)): the split has no tokens")

    with pytest.raises(Exception) as err:
        spark.sparkContext.parallelize([1], 1).mapPartitions(_raise_in_task).collect()
    assert not isinstance(err.value, PipelineError)
    line, code = describe(err.value)
    assert (line, code) == ("source 'a', valid split (documents (10, 10)): the split has no tokens", 1)

    def _refuse_in_task(_rows):  # a config error a task finds (a filter option read on the executor): exit 2
        from pipeline.config import ConfigError

        raise ConfigError("filter.0.languages", "['xx'] not among the labels")

    with pytest.raises(Exception) as err:
        spark.sparkContext.parallelize([1], 1).mapPartitions(_refuse_in_task).collect()
    assert describe(err.value) == ("config key 'filter.0.languages': ['xx'] not among the labels", 2)

    table = tmp_path / "table"
    spark.range(3).write.parquet(str(table))
    with _read_only(table), pytest.raises(Exception) as err:
        spark.range(3).write.mode("overwrite").parquet(str(table))
    line, code = describe(err.value)
    assert code == 1 and line.startswith(f"cannot write to {table}: Spark could not delete") and "\n" not in line


@pytest.mark.parametrize(
    "command, sets, words",
    [
        ("filter", ["filter=[]"], "the filter stage is off in this config (its section 'filter'"),
        ("training-indices", [], "the training-indices stage is off in this config (its section 'training'"),
        (
            "train-tokenizer",
            ["tokenizer.train=false", "tokenizer.vocab=v", "tokenizer.merges=m"],
            "the train-tokenizer stage is off in this config (its section 'tokenizer'",
        ),
    ],
)
def test_a_stage_command_whose_stage_is_off_is_a_usage_error(command, sets, words, tmp_path, monkeypatch, capsys):
    """Issue 46: ``filter`` and ``training-indices`` without their section ran every stage before them, then
    printed ``{}`` and exited 0. The stage being off is one line, exit code 2, before any stage runs."""
    import pipeline.cli.commands as cli
    import pipeline.run.preflight as preflight

    ran: list[str] = []
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(cli, "run_stages", lambda ctx, only=None, **kw: ran.append(only) or {})
    monkeypatch.setattr(preflight, "_exists", lambda key, path: True)  # the tokenizer files of the last case
    argv = [command, "--config", "conf/local.yaml", "--set", f"output={tmp_path / 'run'}"]
    code, line = _run_main([*argv, *[a for s in sets for a in ("--set", s)]], capsys)
    assert code == 2 and words in line and ran == []
    assert not (tmp_path / "run" / "_run.lock").exists()
