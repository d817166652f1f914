"""The train-classifier stage (docs/stages.md, The train-classifier stage) in a whole run on local Spark: a fastText
classifier trained on English sentences (../shared/fixtures/corpus.en) against documents of the run after the rule
filters, used by the ``fasttext_classifier`` filter as ``model: run``. Its model's bytes equal the fastText
library's ``train_supervised`` called here on the stage's training file with the arguments spelled here, a rerun
writes the same bytes, the negatives are documents datatrove's Gopher quality filter keeps, the held-out metrics
are scikit-learn's over the library's own predictions, and a bad section is a one-line error naming its key."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pipeline.cli.explain import explain, format_explanation, format_sample, sample
from pipeline.config import ConfigError, load_config_text
from pipeline.filter.rules import fasttext_classifier as fc
from pipeline.filter.stage import STAGE as FILTER
from pipeline.megatron.reader import IndexedDataset
from pipeline.run.runner import run_stages
from pipeline.spark.ranking import cut_points
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data
from pipeline.train_classifier.stage import STAGE as TRAIN_CLASSIFIER
from tests.oracles import missing_oracle, require_oracle

REPO = Path(__file__).resolve().parents[3]
SEED = 3
NEGATIVES = 150
HOLDOUT = 0.2
KEEP_TOP = 0.1
BUCKETS = 4
# what the test's own train_supervised call gets: DCLM's training script's defaults (lr 0.1, dim 100, ws 5,
# epoch 5, minCount 1, wordNgrams 1) under the section's fasttext options, one thread, the section's seed
FASTTEXT_ARGS = {
    "lr": 0.1,
    "dim": 16,
    "ws": 5,
    "epoch": 5,
    "minCount": 1,
    "wordNgrams": 2,
    "bucket": 20000,
    "thread": 1,
    "seed": SEED,
}

CONFIG = """
output: {out}
spark:
  master: local[2]
  settings: {{spark.sql.shuffle.partitions: "4"}}
sources:
  - {{name: web, paths: [{repo}/pipeline/sample/web], format: jsonl, keep_fields: [url], weight: 0.6}}
  - {{name: forum, paths: [{repo}/pipeline/sample/forum/forum.parquet], format: parquet, text_field: body,
      weight: 0.4}}
filter:
  - {{name: gopher_quality, max_non_alpha_words_ratio: 0.6}}
  - {{name: fasttext_classifier, model: run, score_label: hq, keep_top: {keep_top}, buckets: {buckets},
      newline_replacement: " "}}
classifier:
  positives: [{{name: english, paths: [{shared}/corpus.en], format: text}}]
  negatives: {{from_run: {negatives}}}
  label: hq
  holdout: {holdout}
  seed: {seed}
  fasttext: {{wordNgrams: 2, bucket: 20000, dim: 16}}
tokenizer: {{train: true, vocab_size: 1000}}
tokenize: {{partitions: 2}}
blend: {{mode: fixed, oversample: wrap}}
"""


def _config_text(out: Path, shared: Path) -> str:
    return CONFIG.format(
        out=out,
        repo=REPO,
        shared=shared,
        negatives=NEGATIVES,
        holdout=HOLDOUT,
        seed=SEED,
        keep_top=KEEP_TOP,
        buckets=BUCKETS,
    )


def _fasttext() -> Any:
    module = require_oracle("fasttext")
    if not hasattr(module, "train_supervised"):
        missing_oracle("the fasttext module here cannot train (install fasttext-numpy2-wheel)")
    return module


def _prepared(text: str) -> str:
    """DCLM's fastText text, written out here: the stripped text's lines joined by single spaces."""
    return " ".join(text.strip().splitlines())


@pytest.fixture(scope="module")
def run(spark, shared_fixtures: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole run of CONFIG (every stage), made once for this module."""
    _fasttext()
    out = tmp_path_factory.mktemp("classifier") / "run"
    run_stages(RunContext(load_config_text(_config_text(out, shared_fixtures)), spark=spark), log=lambda _: None)
    return out


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.spark
def test_the_model_is_fasttext_s_own_training_on_the_written_sample(run: Path, tmp_path: Path) -> None:
    """The test's own ``train_supervised`` call, in a fresh interpreter as the stage trains (called in this
    process after the run, fastText gave other bytes than in a fresh interpreter, different ones in two sessions)."""
    _fasttext()
    expected = tmp_path / "expected.bin"
    train = (
        "import fasttext, json, sys\n"
        "fasttext.train_supervised(input=sys.argv[1], verbose=0, **json.loads(sys.argv[3])).save_model(sys.argv[2])\n"
    )
    argv = [sys.executable, "-c", train, str(run / layout.CLASSIFIER_TRAIN), str(expected), json.dumps(FASTTEXT_ARGS)]
    subprocess.run(argv, check=True)
    assert (run / layout.CLASSIFIER_MODEL).read_bytes() == expected.read_bytes()


@pytest.mark.spark
def test_the_sample_is_every_positive_and_the_drawn_negatives_after_the_rule_filter(
    run: Path, shared_fixtures: Path
) -> None:
    gopher = require_oracle("datatrove.pipeline.filters.gopher_quality_filter").GopherQualityFilter
    document = require_oracle("datatrove.data").Document
    train, held = _lines(run / layout.CLASSIFIER_TRAIN), _lines(run / layout.CLASSIFIER_HOLDOUT)
    assert len(held) == len(train + held) - int(len(train + held) * (1 - HOLDOUT))  # DCLM's split
    lines = Counter(train + held)
    english = [line for line in (shared_fixtures / "corpus.en").read_text(encoding="utf-8").splitlines()]
    positives = Counter(f"__label__hq {_prepared(t)}" for t in english if t.strip())
    assert Counter({k: n for k, n in lines.items() if k.startswith("__label__hq ")}) == positives

    rule = gopher(max_non_alpha_words_ratio=0.6)
    docs = pq.read_table(run / layout.DOCUMENTS).to_pylist()
    kept = Counter(
        f"__label__cc {_prepared(d['text'])}" for d in docs if rule.filter(document(text=d["text"], id="x")) is True
    )
    negatives = Counter({k: n for k, n in lines.items() if k.startswith("__label__cc ")})
    assert sum(negatives.values()) == NEGATIVES < sum(kept.values())
    assert not negatives - kept  # every negative is a document the rule filter keeps
    # both classes on both sides of the cut: the training order does not follow the draw
    assert {line.split(" ", 1)[0] for line in held} == {"__label__hq", "__label__cc"}


@pytest.mark.spark
def test_the_metrics_are_scikit_learn_s_over_fasttext_s_predictions(run: Path) -> None:
    fasttext = _fasttext()
    sklearn_metrics = require_oracle("sklearn.metrics")
    model = fasttext.load_model(str(run / layout.CLASSIFIER_MODEL))
    truth, scores = [], []
    for line in _lines(run / layout.CLASSIFIER_HOLDOUT):
        label, _, text = line.partition(" ")
        labels, probs = model.predict(text, k=-1)
        truth.append(label == "__label__hq")
        scores.append(float(dict(zip(labels, probs, strict=True))["__label__hq"]))
    found = json.loads((run / layout.CLASSIFIER_METRICS).read_text())
    held = found["holdout"]
    predicted = [s >= 0.5 for s in scores]
    assert held["precision"] == pytest.approx(sklearn_metrics.precision_score(truth, predicted), abs=1e-12)
    assert held["recall"] == pytest.approx(sklearn_metrics.recall_score(truth, predicted), abs=1e-12)
    assert held["roc_auc"] == pytest.approx(sklearn_metrics.roc_auc_score(truth, scores), abs=1e-9)
    assert held["positives"] == sum(truth) and held["negatives"] == len(truth) - sum(truth)
    numpy = require_oracle("numpy")
    assert held["deciles"]["0.5"] == pytest.approx(float(numpy.median(scores)), abs=1e-7)
    assert found["fasttext"] == {**FASTTEXT_ARGS, "verbose": 0}


@pytest.mark.spark
def test_a_rerun_trains_the_same_bytes(run: Path, spark, shared_fixtures: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    shutil.copytree(run / layout.DOCUMENTS, again / layout.DOCUMENTS)  # the same documents, nothing else
    ctx = RunContext(load_config_text(_config_text(again, shared_fixtures)), spark=spark)
    TRAIN_CLASSIFIER.run(ctx, {"documents": Data(layout.DOCUMENTS, "ingest")})
    for name in (layout.CLASSIFIER_MODEL, layout.CLASSIFIER_TRAIN, layout.CLASSIFIER_HOLDOUT):
        assert (again / name).read_bytes() == (run / name).read_bytes(), name


def _scored(run: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the documents the filter stage kept, the ones below the keep_top cut), each with its score."""
    kept = pq.read_table(run / layout.FILTERED).to_pylist()
    below = [r for r in pq.read_table(run / layout.FILTER_DROPPED).to_pylist() if r["reason"] == fc.KEEP_TOP]
    return kept, below


@pytest.mark.spark
def test_every_label_s_score_is_a_column_and_is_fasttext_s(run: Path) -> None:
    fasttext = _fasttext()
    model = fasttext.load_model(str(run / layout.CLASSIFIER_MODEL))
    kept, below = _scored(run)
    assert kept and below
    texts = {r["doc_id"]: r["text"] for r in pq.read_table(run / layout.DOCUMENTS).to_pylist()}
    for row in kept:
        labels, probs = model.predict(texts[row["doc_id"]].strip().replace("\n", " "), k=-1)
        scores = dict(zip(labels, probs, strict=True))
        assert row["classifier_hq"] == pytest.approx(scores["__label__hq"], abs=1e-6)
        assert row["classifier_cc"] == pytest.approx(scores["__label__cc"], abs=1e-6)
    for row in below:
        labels, probs = model.predict(texts[row["doc_id"]].strip().replace("\n", " "), k=-1)
        assert row["value"] == pytest.approx(dict(zip(labels, probs, strict=True))["__label__hq"], abs=1e-6)


@pytest.mark.spark
def test_keep_top_keeps_the_top_tenth_of_the_run_as_a_sort_on_the_driver_does(run: Path) -> None:
    kept, below = _scored(run)
    scores = [(r["classifier_hq"], r["doc_id"]) for r in kept] + [(r["value"], r["doc_id"]) for r in below]
    order = sorted(scores, key=lambda x: (-x[0], x[1]))
    expected = {d for rank, (_, d) in enumerate(order) if rank < KEEP_TOP * len(order)}
    assert {r["doc_id"] for r in kept} == expected
    cut = order[len(expected) - 1]
    assert all(r["threshold"] == cut[0] for r in below)
    summary = json.loads((run / layout.FILTER_SUMMARY).read_text())
    assert summary["ranking"]["cut"] == list(cut) and summary["ranking"]["total"] == len(order)
    dropped = sum(row["dropped"].get(fc.KEEP_TOP, 0) for row in summary["sources"].values())
    assert dropped == len(below) and sum(row["kept"] for row in summary["sources"].values()) == len(kept)


@pytest.mark.spark
def test_explain_and_sample_name_the_classifier_score_and_the_cut(run: Path) -> None:
    kept, below = _scored(run)
    cut = json.loads((run / layout.FILTER_SUMMARY).read_text())["ranking"]["cut"]
    top = max(kept, key=lambda r: (r["classifier_hq"], -r["doc_id"]))
    info = explain(str(run), top["doc_id"])
    assert info["classifier_scores"] == {"hq": top["classifier_hq"], "cc": top["classifier_cc"]}
    shown = format_explanation(info)
    assert f"top {KEEP_TOP} by hq (cut: hq {cut[0]:.6f}, doc_id {cut[1]})" in shown
    assert f"quality_bucket {BUCKETS - 1}" in shown  # the best score opens the top bucket
    low = below[0]
    info = explain(str(run), low["doc_id"])
    assert info["removed_as"] == fc.KEEP_TOP
    assert info["evidence"]["value"] == low["value"] and info["evidence"]["threshold"] == cut[0]
    drawn = sample(str(run), "filtered", 5, seed=1, rule="fasttext_classifier")
    assert len(drawn) == 5 and all(d["reason"] == fc.KEEP_TOP and d["threshold"] == cut[0] for d in drawn)
    assert f"threshold {cut[0]:g}" in format_sample(drawn[0])


@pytest.mark.spark
def test_the_report_shows_the_metrics_and_the_scores_per_source_with_examples(run: Path) -> None:
    report = json.loads((run / "report.json").read_text())["classifier"]
    metrics = json.loads((run / layout.CLASSIFIER_METRICS).read_text())
    assert report["holdout"]["roc_auc"] == metrics["holdout"]["roc_auc"]
    assert report["holdout"]["deciles"] == metrics["holdout"]["deciles"]
    kept, below = _scored(run)
    scored = [(r["classifier_hq"], r["doc_id"], r["source"]) for r in kept]
    scored += [(r["value"], r["doc_id"], r["source"]) for r in below]
    counts = Counter(source for _, _, source in scored)
    assert {s: sum(h) for s, h in report["scores"]["histograms"].items()} == dict(counts)
    cut = json.loads((run / layout.FILTER_SUMMARY).read_text())["ranking"]["cut"]
    assert report["scores"]["threshold"] == cut[0]
    best = sorted(scored, key=lambda r: (-r[0], r[1]))
    assert [e["doc_id"] for e in report["scores"]["examples"]["top"]] == [d for _, d, _ in best[:3]]
    worst = sorted(scored, key=lambda r: (r[0], r[1]))
    assert [e["doc_id"] for e in report["scores"]["examples"]["bottom"]] == [d for _, d, _ in worst[:3]]
    nearest = sorted(scored, key=lambda r: (abs(r[0] - cut[0]), r[1]))[:3]
    assert [e["doc_id"] for e in report["scores"]["examples"]["threshold"]] == [d for _, d, _ in nearest]
    assert "classifier" in (run / "report.html").read_text(encoding="utf-8")


def _words(text: str) -> int:
    """fastText's words of a text, counted here: runs of characters other than its separators."""
    return len(re.findall(r"[^ \n\r\t\v\f\x00]+", text))


@pytest.mark.spark
def test_quality_buckets_hold_equal_tokens_as_a_sort_on_the_driver_cuts_them(run: Path) -> None:
    kept, _ = _scored(run)
    order = sorted(kept, key=lambda r: (-r["classifier_hq"], r["doc_id"]))
    tokens = [_words(r["text"]) for r in order]
    total = sum(tokens)
    before = 0
    for row, n in zip(order, tokens, strict=True):
        # bucket BUCKETS - 1 holds the first quarter of the tokens (from the top score), 0 the last
        passed = sum(1 for j in range(1, BUCKETS) if before >= j * total / BUCKETS)
        assert row["quality_bucket"] == BUCKETS - 1 - passed, row["doc_id"]
        before += n
    assert {r["quality_bucket"] for r in kept} == set(range(BUCKETS))


@pytest.mark.spark
def test_the_whole_run_writes_megatron_files_of_the_kept_documents(run: Path) -> None:
    kept = {r["doc_id"] for r in pq.read_table(run / layout.FILTERED).to_pylist()}
    survivors = pq.read_table(run / layout.SURVIVORS).to_pylist()
    assert {r["doc_id"] for r in survivors} <= kept
    written = sum(IndexedDataset(str(run / layout.MEGATRON / s)).num_documents for s in ("web", "forum"))
    assert written == len(survivors) > 0
    manifest = json.loads((run / "manifest.json").read_text())
    assert "train-classifier" in manifest["stages"]
    for source, row in manifest["accounting"].items():
        assert row["documents_read"] == row["rejected"] + sum(row["removed"].values()) + row["written"], source


@pytest.mark.spark
@pytest.mark.same_plan
@pytest.mark.parametrize("by_tokens", [False, True])
def test_cuts_equal_a_sort_on_the_driver_with_ties_and_many_partitions(spark, by_tokens: bool) -> None:
    rng = random.Random(7)
    rows = [
        (rng.choice([0.1, 0.25, 0.5, 0.5, 0.9]), rng.randrange(-(2**40), 2**40), rng.choice([0, 1, 3, 40]))
        for _ in range(2000)
    ]
    if not by_tokens:
        rows = [(s, d, 1) for s, d, _ in rows]
    frame = spark.createDataFrame(rows, "s double, doc_id long, w long").repartition(7)
    fractions = [0.0, 0.1, 0.37, 0.5, 0.999, 1.0]
    cuts, total = cut_points(frame, fractions)
    order = sorted(rows, key=lambda r: (-r[0], r[1]))
    assert total == sum(r[2] for r in rows)
    for fraction, cut in zip(fractions, cuts, strict=True):
        before, last = 0, None
        for s, d, w in order:
            if before < fraction * total:
                last = (s, d)
            before += w
        assert cut == last, fraction


def _error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        config = load_config_text(text)
        TRAIN_CLASSIFIER.check_config(config)
        FILTER.check_config(config)
    assert "\n" not in str(caught.value)
    return caught.value


BASE = """
output: /tmp/unused
tokenizer: {train: true}
sources: [{name: web, paths: [x.jsonl]}]
"""
RUN = BASE + "classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}}\n"


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}, fasttext: {thread: 4}}",
         "classifier.fasttext.thread"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}, fasttext: {seed: 4}}",
         "classifier.fasttext.seed"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}, fasttext: {bogus: 1}}",
         "classifier.fasttext.bogus"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}, fasttext: {dim: two}}",
         "classifier.fasttext.dim"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}, fasttext: {loss: l2}}",
         "classifier.fasttext.loss"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5, paths: [n]}}",
         "classifier.negatives"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {}}", "classifier.negatives"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 0}}", "classifier.negatives.from_run"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {paths: [n], format: csv}}",
         "classifier.negatives.format"),
        ("classifier: {positives: [{name: p, paths: [p], format: csv}], negatives: {from_run: 5}}",
         "classifier.positives.0.format"),
        ("classifier: {positives: [], negatives: {from_run: 5}}", "classifier.positives"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}, holdout: 1.5}",
         "classifier.holdout"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}, negative_label: hq}",
         "classifier.negative_label"),
        ("filter: [{name: fasttext_classifier, model: run, keep_labels: [[hq, 0.5]]}]", "filter.0.model"),
        ("classifier: {positives: [{name: p, paths: [p]}], negatives: {from_run: 5}}\n"
         "filter: [{name: fasttext_classifier, model: run, keep_labels: [[good, 0.5]]}]",
         "filter.0.keep_labels.0"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, score_label: good, keep_top: 0.1}]",
         "filter.0.score_label"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, keep_top: 0.1}]", "filter.0.score_label"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, score_label: hq, keep_top: 0.1,"
         " keep_labels: [[hq, 0.5]]}]", "filter.0.keep_labels"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, score_label: hq, keep_top: 0}]", "filter.0.keep_top"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, score_label: hq, keep_top: 1.5}]",
         "filter.0.keep_top"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, score_label: hq, keep_top: 0.1, keep_top_by: words}]",
         "filter.0.keep_top_by"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, keep_labels: [[hq, 0.5]], keep_top_by: tokens}]",
         "filter.0.keep_top_by"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, score_label: hq, buckets: 1}]", "filter.0.buckets"),
        (RUN + "filter: [{name: fasttext_classifier, model: run, score_label: hq, buckets: 5,"
         " filter_mode: paragraph}]", "filter.0.filter_mode"),
        (RUN.replace("[{name: web, paths: [x.jsonl]}]", "[{name: web, paths: [x.jsonl], filter: [{name:"
         " fasttext_classifier, model: run, score_label: hq, keep_top: 0.2}]}]")
         + "filter: [{name: fasttext_classifier, model: run, score_label: hq, keep_top: 0.1}]", "sources.0.filter.0"),
    ],
)  # fmt: skip
def test_a_bad_classifier_section_is_one_line_naming_its_key(section: str, key: str) -> None:
    assert _error(section if section.startswith(BASE) else BASE + section).key == key


def test_the_stage_depends_on_its_section_and_on_the_rule_filters_that_choose_negatives() -> None:
    config = load_config_text(RUN)
    values = TRAIN_CLASSIFIER.config_values(config)
    for key, changes in (
        ("classifier.seed=4", True),
        ("classifier.fasttext.epoch=9", True),
        ("filter=[{name: c4}]", True),  # the rule filters draw the negatives
        ("dedup.threshold=0.5", False),
        ("tokenizer.vocab_size=3000", False),
    ):
        assert (TRAIN_CLASSIFIER.config_values(load_config_text(RUN, [key])) != values) == changes, key
    paths = load_config_text(RUN, ["classifier.negatives.from_run=", "classifier.negatives.paths=[n]"])
    assert TRAIN_CLASSIFIER.config_values(paths) == TRAIN_CLASSIFIER.config_values(
        load_config_text(
            RUN, ["classifier.negatives.from_run=", "classifier.negatives.paths=[n]", "filter=[{name: c4}]"]
        )
    )  # negatives from files: the filter list does not choose them
    assert not TRAIN_CLASSIFIER.applies(load_config_text(BASE)) and TRAIN_CLASSIFIER.applies(config)
