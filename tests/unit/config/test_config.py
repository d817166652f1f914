"""Config loading: defaults, overrides, and errors that name the offending key."""

from __future__ import annotations

import pytest

from pipeline.cli.commands import main as cli_main
from pipeline.config import ConfigError, load_config, load_config_text
from pipeline.run.preflight import check_stage_configs
from tests.config_texts import config_text, write_jsonl


@pytest.fixture()
def base(tmp_path):
    return config_text(write_jsonl(tmp_path), sources={"web": "weight: 1"})


def test_defaults_and_types(base):
    config = load_config_text(base)
    assert config.dedup.num_perm == 256 and config.dedup.threshold == 0.7
    assert config.sources[0].format == "jsonl" and config.sources[0].weight == 1.0


@pytest.mark.parametrize(
    "override, key",
    [
        ("dedup.thresold=0.5", "dedup.thresold"),
        ("dedup.threshold=1.5", "dedup.threshold"),
        ("dedup.threshold=0", "dedup.threshold"),
        ("dedup.num_perm=abc", "dedup.num_perm"),
        ("dedup.verify=maybe", "dedup.verify"),
        ("sources.web.weight=0", "sources.0.weight"),
        ("sources.0.weight=-2", "sources.0.weight"),
        ("sources.0.name=bad/name", "sources.0.name"),
        ("dedup.bands=30", "dedup.rows"),
        ("tokenizer.train=false", "tokenizer.vocab"),
        ("tokenizer.eod_token=<eos>", "tokenizer.eod_token"),
        ("spark.settings=[1, 2]", "spark.settings"),
        ("dedup.threshold=1.0", "dedup.threshold"),
        ("blend.weights=30 web 70 nowhere", "blend.weights"),
        ("blend.weights=web wiki forum", "blend.weights"),
        ("blend.weights=-3 web", "blend.weights"),
    ],
)
def test_bad_values_name_the_key(base, override, key):
    with pytest.raises(ConfigError) as err:
        check_stage_configs(load_config_text(base, [override]))  # as the command line checks a config
    assert err.value.key == key
    assert key in str(err.value)


def test_unknown_format_names_the_key_before_spark(base):
    """Format names are those of pipeline.sources.formats: the ingest stage's config check refuses others."""
    config = load_config_text(base, ["sources.0.format=xml"])
    with pytest.raises(ConfigError) as err:
        check_stage_configs(config)
    assert err.value.key == "sources.0.format"
    assert "must be one of jsonl, parquet, text, warc, wet; got 'xml'" in str(err.value)
    for name in ("jsonl", "parquet", "text"):
        check_stage_configs(load_config_text(base, [f"sources.0.format={name}"]))


def test_overrides_reach_nested_values_and_sources_by_name(base):
    config = load_config_text(base, ["dedup.threshold=0.8", "sources.web.weight=2.5", "spark.settings.a=b"])
    assert config.dedup.threshold == 0.8
    assert config.sources[0].weight == 2.5
    assert config.spark.settings == {"a": "b"}


def test_bands_times_rows_cannot_exceed_permutations(base):
    with pytest.raises(ConfigError, match="exceeds num_perm"):
        load_config_text(base, ["dedup.bands=30", "dedup.rows=10"])


def test_missing_required_and_duplicate_sources(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_config_text("sources: []\n")
    assert err.value.key == "output"
    twice = "output: x\ntokenizer: {train: true}\nsources:\n  - {name: a, paths: [p]}\n  - {name: a, paths: [q]}\n"
    with pytest.raises(ConfigError) as err:
        load_config_text(twice)
    assert err.value.key == "sources.1.name"


def test_missing_source_path_fails_before_spark(tmp_path, capsys, monkeypatch):
    config = tmp_path / "c.yaml"
    config.write_text(config_text(tmp_path / "nothing-here" / "*.jsonl", sources={"web": "weight: 1"}))

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark must not start for a bad config")

    monkeypatch.setattr("pipeline.spark.session.build_session", no_spark)
    assert cli_main(["ingest", "--config", str(config)]) == 2
    assert "sources.0.paths.0" in capsys.readouterr().err


def test_load_config_from_file(tmp_path, base):
    path = tmp_path / "c.yaml"
    path.write_text(base)
    assert load_config(path, ["output=/tmp/other"]).output == "/tmp/other"


def test_blend_weights_in_megatron_mode_need_every_source(tmp_path):
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "x"}\n')
    two = (
        f"output: /tmp/run\ntokenizer: {{train: true}}\nsources:\n  - {{name: web, paths: [{data}], weight: 1}}\n"
        f"  - {{name: wiki, paths: [{data}], weight: 1}}\n"
    )
    assert load_config_text(two, ["blend.weights=30 web 70 wiki"]).blend.weights == "30 web 70 wiki"
    with pytest.raises(ConfigError) as err:
        check_stage_configs(load_config_text(two, ["blend.weights=30 web", "blend.mode=megatron"]))
    assert err.value.key == "blend.weights" and "wiki" in str(err.value)


THREE = """
output: /tmp/run
tokenizer: {{train: true}}
sources:
  - {{name: web, paths: ["{p}"]}}
  - {{name: wiki, paths: ["{p}"]}}
  - {{name: code, paths: ["{p}"]}}
"""


@pytest.mark.parametrize("name", ["web\n", "web\r", "we b", "-web", "web/x", ""])
def test_source_names_must_match_entirely(base, name):
    with pytest.raises(ConfigError) as err:
        load_config_text(base.replace("name: web", f"name: {name!r}".replace("'", '"').replace("\\n", "\\n")))
    assert err.value.key == "sources.0.name"


def test_source_name_with_trailing_newline_via_override(base):
    with pytest.raises(ConfigError) as err:
        load_config_text(base, ['sources.0.name="web\\n"'])
    assert err.value.key == "sources.0.name"


@pytest.mark.parametrize(
    "override, key",
    [
        ("dedup.seed=-1", "dedup.seed"),
        ("dedup.seed=4294967296", "dedup.seed"),
        ("dedup.num_perm=1", "dedup.num_perm"),
        ("dedup.num_perm=5000", "dedup.num_perm"),
        ("dedup.ngram=0", "dedup.ngram"),
        ("dedup.ngram=99999999999", "dedup.ngram"),
        ("dedup.bands=-2", "dedup.bands"),
        ("dedup.rows=0", "dedup.rows"),
        ("dedup.min_tokens=-1", "dedup.min_tokens"),
        ("dedup.min_tokens=99999999999", "dedup.min_tokens"),
        ("dedup.max_shingles=0", "dedup.max_shingles"),
        ("dedup.checkpoint_interval=0", "dedup.checkpoint_interval"),
        ("ingest.partitions=0", "ingest.partitions"),
        ("ingest.partitions=-4", "ingest.partitions"),
        ("ingest.split_bytes=0", "ingest.split_bytes"),
        ("ingest.split_bytes=99999999999999999999", "ingest.split_bytes"),
        ("ingest.max_text_bytes=0", "ingest.max_text_bytes"),
        ("ingest.max_text_bytes=4294967296", "ingest.max_text_bytes"),
        ("ingest.excerpt_chars=-1", "ingest.excerpt_chars"),
        ("tokenizer.vocab_size=256", "tokenizer.vocab_size"),
        ("tokenizer.vocab_size=4294967296", "tokenizer.vocab_size"),
        ("tokenizer.min_pretoken_count=0", "tokenizer.min_pretoken_count"),
        ("tokenizer.max_distinct_pretokens=0", "tokenizer.max_distinct_pretokens"),
        ("tokenize.partitions=0", "tokenize.partitions"),
        ("tokenize.partitions=100001", "tokenize.partitions"),
        ("blend.size=0", "blend.size"),
        ("blend.size=-5", "blend.size"),
        ("blend.size=99999999999999999999", "blend.size"),
        ("sources.0.priority=99999999999999999999", "sources.0.priority"),
        ("sources.0.weight=.inf", "sources.0.weight"),
        ("sources.0.weight=.nan", "sources.0.weight"),
    ],
)
def test_every_numeric_key_has_a_range(base, override, key):
    with pytest.raises(ConfigError) as err:
        check_stage_configs(load_config_text(base, [override]))  # as the command line checks a config
    assert err.value.key == key


@pytest.mark.parametrize(
    "override",
    [
        "dedup.seed=0",
        "dedup.seed=4294967295",
        "tokenize.partitions=100000",
        "dedup.min_tokens=0",
        "sources.0.priority=-3",
        "ingest.excerpt_chars=0",
    ],
)
def test_range_edges_that_are_allowed(base, override):
    load_config_text(base, [override])


def test_override_reaches_a_spark_setting_whose_name_has_dots(base):
    config = load_config_text(
        base, ["spark.settings.spark.sql.shuffle.partitions=4", "spark.settings.spark.driver.memory=2g"]
    )
    assert config.spark.settings == {"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "2g"}
    with_setting = base.replace("tokenizer:", "spark: {settings: {spark.sql.shuffle.partitions: 8}}\ntokenizer:")
    again = load_config_text(with_setting, ["spark.settings.spark.sql.shuffle.partitions=4"])
    assert again.spark.settings == {"spark.sql.shuffle.partitions": "4"}


def test_partial_blend_weights_name_the_missing_sources(tmp_path):
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "x"}\n')
    with pytest.raises(ConfigError) as err:
        check_stage_configs(load_config_text(THREE.format(p=data), ["blend.weights=30 web 70 wiki"]))
    assert err.value.key == "blend.weights" and "code" in str(err.value)
    assert "web" not in str(err.value).split("missing", 1)[1]
    full = load_config_text(THREE.format(p=data), ["blend.weights=30 web 70 wiki 5 code"])
    assert full.blend.weights == "30 web 70 wiki 5 code"


def test_relative_local_paths_are_anchored_where_the_run_starts(tmp_path, monkeypatch):
    """Executors on a cluster have other working directories: relative paths become absolute at load."""
    monkeypatch.chdir(tmp_path)
    text = """
output: runs/day
sources:
  - {name: web, paths: [raw/web, "raw/*.jsonl", gs://b/raw/x.jsonl, /data/y.jsonl]}
spark: {checkpoint_dir: ckpt}
tokenizer: {train: false, vocab: tok/vocab.json, merges: s3://b/merges.txt}
"""
    config = load_config_text(text)
    assert config.output == str(tmp_path / "runs" / "day")
    assert config.sources[0].paths == [
        str(tmp_path / "raw" / "web"),
        str(tmp_path / "raw" / "*.jsonl"),
        "gs://b/raw/x.jsonl",
        "/data/y.jsonl",
    ]
    assert config.spark.checkpoint_dir == str(tmp_path / "ckpt")
    assert config.tokenizer.vocab == str(tmp_path / "tok" / "vocab.json")
    assert config.tokenizer.merges == "s3://b/merges.txt"


def test_a_set_value_arrives_whole_or_is_refused(tmp_path, capsys):
    """``--set "output=/data/o #1"``: YAML would read `` #1`` as a comment and write to /data/o (issue #28, 3)."""
    base = config_text(write_jsonl(tmp_path))
    quoted = load_config_text(base, [f'output="{tmp_path}/o #1"', "sources.web.text_field=body #x"[:-3]])
    assert quoted.output == f"{tmp_path}/o #1" and quoted.sources[0].text_field == "body"
    with pytest.raises(ConfigError) as err:
        load_config_text(base, [f"output={tmp_path}/o #1"])
    assert err.value.key == "output" and "'#1'" in str(err.value) and "quote the value" in str(err.value)
    with pytest.raises(ConfigError, match="is not valid YAML"):
        load_config_text(base, ["dedup.threshold=[0.7"])
    (tmp_path / "c.yaml").write_text(base)
    code = cli_main(["ingest", "--config", str(tmp_path / "c.yaml"), "--set", f"output={tmp_path}/o #1"])
    assert code == 2 and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "override, key, words",
    [
        # issue 46: an index past the end was "no list item '9' (use an index or a source name)", in a filter list
        (
            "filter.9.min_score=0.5",
            "filter.9",
            "index 9 is out of range: filter holds 2 item(s) (0 to 1), named c4, pii",
        ),
        ("filter.gopher.x=1", "filter.gopher", "no item is named 'gopher': filter holds 2 item(s)"),
        ("sources.3.weight=2", "sources.3", "index 3 is out of range: sources holds 1 item(s) (0 to 0), named web"),
        # a source with no filter list of its own was "expected a list, got dict" (the override had made one)
        ("sources.web.filter.0.min_score=0.5", "sources.web.filter", "is not set, so it has no items to change"),
        ("sources.0.filter.c4.x=1", "sources.0.filter", "the source uses the run's filter list"),
    ],
)
def test_set_errors_say_what_is_wrong_with_a_list_item(base, override, key, words):
    with pytest.raises(ConfigError) as err:
        load_config_text(base + "filter:\n  - {name: c4}\n  - {name: pii}\n", [override])
    assert err.value.key == key and words in str(err.value)
    assert "source name" not in str(err.value) and "expected a list" not in str(err.value)


def test_set_on_an_absent_run_filter_list_says_it_is_not_set(base):
    with pytest.raises(ConfigError) as err:
        load_config_text(base, ["filter.0.min_score=0.5"])
    assert (
        err.value.key == "filter" and "is not set" in str(err.value) and "--set 'filter=[{name: c4}]'" in str(err.value)
    )
    whole = load_config_text(base, ["sources.web.filter=[{name: c4, min_num_sentences: 2}]"])
    assert whole.sources[0].filter == [{"name": "c4", "min_num_sentences": 2}]


def test_a_boolean_where_a_string_is_expected_is_refused_with_the_yaml_hint() -> None:
    """An unquoted ``no`` is YAML's false: refused, not turned into the string 'False'."""
    from tests.config_texts import config_text

    with pytest.raises(ConfigError) as caught:
        load_config_text(config_text("/tmp/in.jsonl") + "tokenizer: {kind: tiktoken, pattern: no}\n")
    assert caught.value.key == "tokenizer.pattern" and "quote it" in str(caught.value)
