"""The filter stage in one process: config entries checked against the filters' signatures, the batch step's kept
and dropped rows, and its summary (counts, languages, histograms), each compared with what the test computes from
the texts itself with the toy filters' simple rules (tests/filter_toys.py)."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pytest

from pipeline.config import ConfigError, load_config_text
from pipeline.filter import entries, registry
from pipeline.filter.batches import Summary, filter_partition, output_schema
from pipeline.filter.plan import make_plan, summary_json
from pipeline.filter.rules.fineweb import FineWebFilter
from pipeline.filter.thresholds import BINS, bin_edges, histogram
from pipeline.run.registry import stage
from tests.filter_toys import TOYS

BASE = """
output: /tmp/run
sources:
  - {{name: web, paths: [{path}]}}
  - {{name: code, paths: [{path}]}}
tokenizer: {{train: true}}
"""


@pytest.fixture(autouse=True)
def toys():
    for name, target in TOYS.items():
        registry.register(name, target)
    yield
    for name in TOYS:
        registry.unregister(name)


@pytest.fixture()
def base(tmp_path):
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "hello world"}\n')
    return BASE.format(path=data)


def _config(base: str, *sets: str):
    config = load_config_text(base, list(sets))
    entries.check_config(config)
    return config


def test_no_filter_list_skips_the_stage(base):
    config = load_config_text(base)
    assert config.filter == [] and not stage("filter").applies(config)
    assert not stage("filter").applies(load_config_text(base, ["sources.web.filter=[]"]))
    assert stage("filter").applies(load_config_text(base, ["sources.code.filter=[{name: toy_length}]"]))


@pytest.mark.parametrize(
    ("sets", "key", "words"),
    [
        (["filter=[{name: toy_length}, {name: nope}]"], "filter.1.name", "unknown filter 'nope'"),
        (["filter=[{name: toy_length, min_doc_words: 3}]"], "filter.0.min_doc_words", "unknown key of filter"),
        (["filter=[{name: toy_length, min_words: many}]"], "filter.0.min_words", "expected an integer"),
        (["filter=[{name: toy_script, languages: en}]"], "filter.0.languages", "expected a list"),
        (["filter=[{name: toy_length}]", "sources.code.filter=[{name: toy_digits, replacement: 3}]"],
         "sources.1.filter.0.replacement", "expected a string"),
        (["filter=[{min_words: 3}]"], "filter.0.name", "names its filter"),
    ],
)  # fmt: skip
def test_a_bad_entry_is_a_one_line_error_naming_its_key(base, sets, key, words):
    with pytest.raises(ConfigError) as caught:
        _config(base, *sets)
    message = str(caught.value)
    assert f"'{key}'" in message and words in message and "\n" not in message


def test_a_source_override_replaces_the_run_list_and_defaults_are_filled_in(base):
    config = _config(base, "filter=[{name: toy_length, min_words: 3}]", "sources.code.filter=[]")
    found = entries.effective(config)
    assert found == {"web": [{"name": "toy_length", "min_words": 3, "max_words": None}], "code": []}
    # fingerprinted: a change of either list changes the stage's inputs
    inputs = stage("filter").config_values
    other = _config(base, "filter=[{name: toy_length, min_words: 4}]", "sources.code.filter=[]")
    assert inputs(config) != inputs(other)
    assert inputs(config) != inputs(_config(base, "filter=[{name: toy_length, min_words: 3}]"))


TEXTS = [
    ("web", "one two three"),
    ("web", "The 3 quick brown foxes jumped over 12 lazy dogs today."),
    ("web", "Ünïcödé words are here and there, five of them at least."),
    ("web", "short"),
    ("code", "x = 1"),
    ("code", "def f(a, b): return a + b  # adds 2 numbers"),
    ("web", "A plain sentence with 9 words in it, all ASCII text."),
]


def _batch(rows) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "doc_id": pa.array(range(len(rows)), pa.int64()),
            "source": [s for s, _ in rows],
            "text": [t for _, t in rows],
        }
    )


def test_the_batch_step_keeps_drops_rewrites_and_summarises(base):
    config = _config(
        base,
        "filter=[{name: toy_script, languages: [ascii]}, {name: toy_length, min_words: 6}, {name: toy_digits}]",
        "sources.code.filter=[{name: toy_digits, replacement: D}]",
    )
    plan = make_plan(config)
    batch = _batch(TEXTS)
    schema = output_schema(batch.schema)
    out = pa.Table.from_batches(list(filter_partition(iter([batch.slice(0, 4), batch.slice(4)]), plan, schema)))
    rows = out.to_pylist()
    kept = {r["doc_id"]: r for r in rows if r["kind"] == "kept"}
    dropped = {r["doc_id"]: r for r in rows if r["kind"] == "dropped"}
    summaries = [json.loads(r["summary"]) for r in rows if r["kind"] == "summary"]
    assert len(summaries) == 1

    # the test's own reading of the rules: web: non-ASCII -> not listed, then fewer than 6 words -> too short,
    # then digits -> '#'; code: digits -> 'D' only
    want_kept, want_dropped = {}, {}
    for i, (source, text) in enumerate(TEXTS):
        if source == "code":
            want_kept[i] = (re.sub("[0-9]", "D", text), None)
        elif not text.isascii():
            want_dropped[i] = ("toy_script.not_listed", None, None, text[:300])
        elif len(text.split()) < 6:
            want_dropped[i] = ("toy_length.too_short", float(len(text.split())), 6.0, text[:300])
        else:
            want_kept[i] = (re.sub("[0-9]", "#", text), "ascii")
    assert {i: (r["text"], r["language"]) for i, r in kept.items()} == want_kept
    assert {i: (r["reason"], r["value"], r["threshold"], r["excerpt"]) for i, r in dropped.items()} == {
        i: (reason, value if reason != "toy_script.not_listed" else dropped[i]["value"], threshold, excerpt)
        for i, (reason, value, threshold, excerpt) in want_dropped.items()
    }
    ascii_fraction = sum(c.isascii() for c in TEXTS[2][1]) / len(TEXTS[2][1])
    assert dropped[2]["value"] == pytest.approx(ascii_fraction)  # the filter's only measure: its score
    assert all(r["language_score"] == 1.0 for r in kept.values() if r["source"] == "web")
    assert all(r["language"] is None and r["language_score"] is None for r in kept.values() if r["source"] == "code")

    merged = Summary()
    merged.merge(summaries[0])
    summary = summary_json(plan, merged.to_json(), ["web", "code"])
    web = [t for s, t in TEXTS if s == "web"]
    assert summary["sources"]["web"] == {
        "read": len(web),
        "kept": sum(1 for i in want_kept if TEXTS[i][0] == "web"),
        "dropped": {"toy_script.not_listed": 1, "toy_length.too_short": 2},
        "changed": {"toy_script": 0, "toy_length": 0, "toy_digits": 2},
        "languages": {"ascii": 4, "other": 1},
    }
    assert summary["sources"]["code"]["changed"] == {"toy_digits": 2}
    assert summary["filters"]["code"] == [{"name": "toy_digits", "replacement": "D"}]
    rule = summary["measures"]["toy_length.too_short"]
    assert (rule["threshold"], rule["direction"]) == (6.0, "min")
    words = [len(t.split()) for t in web if t.isascii()]  # the documents the rule evaluated
    edges = rule["bins"]
    inside, _ = np.histogram(words, bins=edges)  # numpy's binning: the last bin closed, as ours
    expected = [sum(w < edges[0] for w in words), *inside.tolist(), sum(w > edges[-1] for w in words)]
    assert rule["counts"] == {"web": expected}
    assert len(edges) == BINS + 1 and edges[0] == 0 and edges[-1] == 12.0  # count rule: [0, 2 x threshold]


def test_histogram_bins_agree_with_numpy_with_under_and_overflow():
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.uniform(-0.5, 1.5, 1000), [np.nan, 0.0, 1.0, 1.0]])
    edges = bin_edges(0.12, FineWebFilter.rule_kinds()["fineweb.line_punct_ratio"])
    inside, _ = np.histogram(values[np.isfinite(values)], bins=edges)
    finite = values[np.isfinite(values)]
    want = [int((finite < 0).sum()), *inside.tolist(), int((finite > 1).sum())]
    assert histogram(values, edges).tolist() == want


def test_the_word_filters_of_one_batch_split_each_text_once(base, monkeypatch):
    """Gopher repetition and quality both read every document's words; the step splits each text once, and the
    decisions equal each filter run alone outside the step."""
    from pipeline.filter.rules.gopher_quality import GopherQualityFilter
    from pipeline.filter.rules.gopher_repetition import GopherRepetitionFilter
    from pipeline.text.english import words

    sentence = "The cat and the dog sat with a bird that would have sung of the sea. "
    texts = [sentence * k + f"Line {k} ends here." for k in range(1, 9)] + ["Short one."]
    calls: list[str] = []
    inner = words.text_words
    monkeypatch.setattr(words, "text_words", lambda text: calls.append(text) or inner(text))
    config = _config(
        base,
        "filter=[{name: gopher_repetition, top_n_grams: [], dup_n_grams: []},"
        " {name: gopher_quality, min_doc_words: 20}]",
    )
    batch = _batch([("web", t) for t in texts])
    rows = list(filter_partition(iter([batch]), make_plan(config), output_schema(batch.schema)))
    kept = sorted(r["doc_id"] for r in pa.Table.from_batches(rows).to_pylist() if r["kind"] == "kept")
    assert sorted(calls) == sorted(texts)  # each once, though both filters read the words of the kept ones
    alone = batch
    for f in (GopherRepetitionFilter(top_n_grams=(), dup_n_grams=()), GopherQualityFilter(min_doc_words=20)):
        alone = alone.filter(pa.array(f.apply(alone).keep))
    assert kept == alone.column("doc_id").to_pylist() and 0 < len(kept) < len(texts)
