"""``blend.weights`` naming (source, quality bucket) pairs (docs/blending.md, Quality buckets): the datasets it makes,
and a bad name refused before Spark starts with one line naming ``blend.weights``."""

from __future__ import annotations

import pytest

from pipeline.blend.weights import blend_datasets, blend_weights_by_source
from pipeline.config import ConfigError, load_config_text
from pipeline.run.preflight import check_stage_configs

BASE = """
output: /tmp/unused
tokenizer: {train: true}
sources: [{name: web, paths: [x.jsonl]}, {name: wiki, paths: [y.jsonl]}]
classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}}
filter: [{name: fasttext_classifier, model: run, score_label: hq, buckets: 3}]
"""
NO_BUCKETS = BASE.replace("buckets: 3", "keep_top: 0.5")
OWN_LIST = BASE.replace(
    "{name: wiki, paths: [y.jsonl]}", "{name: wiki, paths: [y.jsonl], filter: [{name: gopher_quality}]}"
)
ALL = "1 web/bucket=0 2 web/bucket=1 4 web/bucket=2 3 wiki"


def _config(text: str, weights: str):
    return load_config_text(text, [f"blend.weights={weights}"])


def test_each_bucket_of_a_source_weighed_by_bucket_is_a_dataset_in_bucket_order() -> None:
    config = _config(BASE, "3 wiki 4 web/bucket=2 1 web/bucket=0 2 web/bucket=1")
    check_stage_configs(config)
    assert blend_datasets(config) == [
        ("web/bucket=0", "web", 0),
        ("web/bucket=1", "web", 1),
        ("web/bucket=2", "web", 2),
        ("wiki", "wiki", None),
    ]
    assert blend_weights_by_source(config) == {
        "wiki": 3.0,
        "web/bucket=2": 4.0,
        "web/bucket=0": 1.0,
        "web/bucket=1": 2.0,
    }


def test_without_bucket_names_the_datasets_are_the_sources() -> None:
    config = _config(BASE, "1 web 3 wiki")
    check_stage_configs(config)
    assert blend_datasets(config) == [("web", "web", None), ("wiki", "wiki", None)]


@pytest.mark.parametrize(
    ("text", "weights", "says"),
    [
        (NO_BUCKETS, ALL, "no fasttext_classifier filter with buckets"),
        (OWN_LIST, "1 web 1 wiki/bucket=0 1 wiki/bucket=1 1 wiki/bucket=2", "source 'wiki' has no fasttext_classifier"),
        (BASE, "1 news/bucket=0 1 web 1 wiki", "unknown source 'news'"),
        (BASE, "1 web/bucket=3 1 web/bucket=0 1 web/bucket=1 1 web/bucket=2 1 wiki", "buckets 0 to 2"),
        (BASE, "1 web/bucket=x 1 wiki", "<source>/bucket=<n>"),
        (BASE, "1 web/bucket=01 1 wiki", "<source>/bucket=<n>"),
        (BASE, "1 web/quality=1 1 wiki", "<source>/bucket=<n>"),
        (BASE, "1 web/bucket=0 1 wiki", "missing ['web/bucket=1', 'web/bucket=2']"),
        (BASE, "1 web 1 web/bucket=0 1 web/bucket=1 1 web/bucket=2 1 wiki", "both whole and by quality bucket"),
        (BASE, ALL + " 1 web/bucket=0", "more than once: ['web/bucket=0']"),
        (BASE, "1 web/bucket=0 0 web/bucket=1 1 web/bucket=2 1 wiki", "must be finite and > 0"),
    ],
)
def test_a_bad_bucket_weight_is_one_line_naming_blend_weights_before_spark(text: str, weights: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_stage_configs(_config(text, weights))
    assert caught.value.key == "blend.weights"
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)
