"""Config keys of issue #17: dedup.index and decontaminate.* (defaults off, clear errors naming the key)."""

from __future__ import annotations

import pytest

from pipeline.config import ConfigError, load_config_text
from pipeline.run.preflight import check_stage_configs
from pipeline.run.registry import STAGES
from pipeline.run.runner import stage_inputs
from tests.config_texts import config_text, write_jsonl


@pytest.fixture()
def base(tmp_path):
    return config_text(write_jsonl(tmp_path), output="/tmp/run-17")


def test_defaults_are_off_and_recorded_in_the_dedup_inputs(base):
    """Off, both are recorded at their defaults (a run made before they existed still resumes: its marker is
    upgraded, tests/unit/run/test_run_stage.py)."""
    config = load_config_text(base)
    assert config.dedup.index is None
    assert config.decontaminate.references == []
    assert config.decontaminate.ngram == 13 and config.decontaminate.min_matches == 1
    dedup = next(s for s in STAGES if s.name == "dedup")
    inputs = stage_inputs(dedup, config)
    assert inputs["dedup"]["index"] is None and inputs["decontaminate"]["references"] == []


def test_keys_are_read_and_relative_paths_anchored(base, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ref = tmp_path / "bench.jsonl"
    ref.write_text('{"text": "x"}\n')
    config = load_config_text(
        base,
        [
            "dedup.index=idx",
            "decontaminate.ngram=8",
            "decontaminate.min_matches=2",
            f"decontaminate.references=[{{name: mmlu, paths: [{ref}]}}]",
        ],
    )
    assert config.dedup.index == str(tmp_path / "idx")
    assert config.decontaminate.references[0].name == "mmlu"
    assert config.decontaminate.ngram == 8 and config.decontaminate.min_matches == 2
    dedup = next(s for s in STAGES if s.name == "dedup")
    inputs = stage_inputs(dedup, config)
    assert inputs["dedup"]["index"] == str(tmp_path / "idx") and inputs["decontaminate"]["ngram"] == 8
    remote = load_config_text(base, ["dedup.index=gs://bucket/dedup-index"])
    assert remote.dedup.index == "gs://bucket/dedup-index"


@pytest.mark.parametrize(
    "override, key",
    [
        ("dedup.index=http://host/index", "dedup.index"),
        ("dedup.index=memory://index", "dedup.index"),
        ("dedup.index=/tmp/run-17/index", "dedup.index"),
        ("dedup.index=/tmp/run-17", "dedup.index"),
        ("decontaminate.ngram=0", "decontaminate.ngram"),
        ("decontaminate.min_matches=0", "decontaminate.min_matches"),
        ("decontaminate.references=[{name: a, paths: []}]", "decontaminate.references.0.paths"),
        ("decontaminate.references=[{paths: [x]}]", "decontaminate.references.0.name"),
        ("decontaminate.references=[{name: a, paths: [x]}, {name: a, paths: [y]}]", "decontaminate.references.1.name"),
        ("decontaminate.refs=[]", "decontaminate.refs"),
    ],
)
def test_bad_values_name_the_key(base, override, key):
    with pytest.raises(ConfigError) as err:
        load_config_text(base, [override])
    assert err.value.key == key


def test_a_reference_format_is_checked_like_a_source_format(base):
    config = load_config_text(
        base, ["decontaminate.references=[{name: a, paths: [x]}, {name: b, paths: [y], format: csv}]"]
    )
    with pytest.raises(ConfigError) as err:
        check_stage_configs(config)
    assert err.value.key == "decontaminate.references.1.format" and "got 'csv'" in str(err.value)
