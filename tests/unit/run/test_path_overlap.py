"""An output directory must not overlap a source's input (issue 14, item 6): refused before Spark, naming both."""

from __future__ import annotations

import pytest

from pipeline.config import ConfigError, load_config_text
from pipeline.run.preflight import check_output_apart_from_sources


def _config(output: str, path: str):
    return load_config_text(_yaml(output, path))


def _yaml(output, path) -> str:
    return f'output: "{output}"\ntokenizer: {{train: true}}\nsources: [{{name: web, paths: ["{path}"]}}]\n'


@pytest.mark.parametrize(
    "output, source",
    [
        ("{t}/raw/run", "{t}/raw"),  # output inside the input directory
        ("{t}/raw", "{t}/raw"),  # equal
        ("{t}/raw/sub/run", "{t}/raw/*/*.jsonl"),  # inside a glob's fixed directory
        ("{t}/raw/../raw/run", "{t}/raw/"),  # not fooled by .. or a trailing slash
        ("{t}/run", "{t}/run/documents/*.parquet"),  # a source inside the output
        ("gs://bucket/raw/run", "gs://bucket/raw/"),
        ("s3://bucket/runs/a", "s3://bucket/runs/a/part-*.jsonl"),
    ],
)
def test_overlapping_output_and_source_are_refused(tmp_path, output, source):
    output, source = output.format(t=tmp_path), source.format(t=tmp_path)
    with pytest.raises(ConfigError) as err:
        check_output_apart_from_sources(_config(output, source))
    assert err.value.key == "output"
    assert "sources.0.paths.0" in str(err.value) and source.rstrip("/") in str(err.value)


def test_relative_output_inside_the_source_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "raw").mkdir()
    with pytest.raises(ConfigError):
        check_output_apart_from_sources(_config("raw/run", str(tmp_path / "raw")))


@pytest.mark.parametrize(
    "output, source",
    [
        ("{t}/runs/a", "{t}/raw"),
        ("{t}/raw-run", "{t}/raw"),  # a shared name prefix is not nesting
        ("gs://bucket/runs/a", "gs://bucket/raw/*.jsonl"),
        ("gs://other/raw/run", "gs://bucket/raw"),
    ],
)
def test_separate_output_and_source_are_fine(tmp_path, output, source):
    check_output_apart_from_sources(_config(output.format(t=tmp_path), source.format(t=tmp_path)))


def test_the_cli_refuses_before_spark(tmp_path, monkeypatch, capsys):
    from pipeline.cli.commands import main as cli_main

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.jsonl").write_text('{"text": "hello there"}\n')
    config = tmp_path / "c.yaml"
    config.write_text(_yaml(raw / "run", raw))

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark must not start")

    monkeypatch.setattr("pipeline.spark.session.build_session", no_spark)
    assert cli_main(["ingest", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "output" in err and "sources.0.paths.0" in err
