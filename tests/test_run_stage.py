"""The stage contract: registered Stage objects, typed per-source tallies, the accounting on them."""

from __future__ import annotations

import pytest

from pipeline.config import load_config_text
from pipeline.run.accounting import AccountingError, account
from pipeline.run.registry import STAGE_NAMES, STAGES, stage
from pipeline.stage_api.stage import Stage

BASE = """
output: /tmp/run
sources:
  - name: web
    paths: [{path}]
    weight: 1
  - name: wiki
    paths: [{path}]
    weight: 2
tokenizer:
  train: true
"""
# one override per config key a stage may declare (config_keys), each changing that value
OVERRIDES = {
    "sources[].text_field": "sources.web.text_field=body",
    "sources[].format": "sources.web.format=text",
    "sources[].text_unit": "sources.web.text_unit=file",
    "sources[].priority": "sources.web.priority=3",
    "sources[].weight": "sources.web.weight=3",
    "ingest": "ingest.max_text_bytes=1000",
    "dedup": "dedup.threshold=0.8",
    "tokenizer": "tokenizer.vocab_size=600",
    "tokenize": "tokenize.partitions=3",
    "blend": "blend.mode=megatron",
    "training": "training={sequence_length: 8, samples: [10, 1, 1], tokenizer: {class: T}}",
    "filter": "filter=[{name: language}]",
    "sources[].filter": "sources.web.filter=[]",
}


@pytest.fixture()
def base(tmp_path):
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "hello world"}\n')
    return BASE.format(path=data)


def test_stages_run_in_pipeline_order_as_objects():
    assert STAGE_NAMES == (
        "ingest", "filter", "dedup", "train-tokenizer", "tokenize", "merge-blend", "training-indices"
    )  # fmt: skip
    assert all(isinstance(s, Stage) and callable(s.body) for s in STAGES)
    assert stage("dedup") is STAGES[2]


@pytest.mark.parametrize(
    "name", ["ingest", "filter", "dedup", "train-tokenizer", "tokenize", "merge-blend", "training-indices"]
)
@pytest.mark.parametrize("key", sorted(OVERRIDES))
def test_a_stage_depends_on_exactly_its_declared_config_keys(base, name, key):
    """A stage's recorded inputs change with a key it declares and with no other."""
    st = stage(name)
    before = st.inputs(load_config_text(base))
    after = st.inputs(load_config_text(base, [OVERRIDES[key]]))
    assert (before != after) == (key in st.config_keys), (name, key, st.config_keys)


def test_train_tokenizer_applies_only_when_training(base):
    assert stage("train-tokenizer").applies(load_config_text(base))
    assert not stage("train-tokenizer").applies(
        load_config_text(base, ["tokenizer.train=false", "tokenizer.vocab=v.json", "tokenizer.merges=m.txt"])
    )


def test_training_indices_applies_only_with_a_training_section(base):
    assert not stage("training-indices").applies(load_config_text(base))
    assert stage("training-indices").applies(load_config_text(base, [OVERRIDES["training"]]))


def _results(written_web: int = 2, published: bool = True):
    ingest = stage("ingest").result(
        {
            "splits": 2,
            "sources": {
                "web": {"documents_read": 5, "rejected": 1, "documents": 4, "rejects_by_reason": {"empty_text": 1}}
            },
        }
    )
    dedup = stage("dedup").result({"sources": {"web": {"documents": 4, "duplicates_removed": 2, "survivors": 2}}})
    merge = stage("merge-blend").result(
        {"merge": {"sources": {"web": {"published": published, "documents": written_web}}, "unpublished": []}}
    )
    return ingest, dedup, merge


def test_recorded_counts_become_typed_tallies():
    ingest, dedup, merge = _results()
    assert (ingest.sources["web"].read, ingest.sources["web"].rejected, ingest.sources["web"].documents) == (5, 1, 4)
    assert (dedup.sources["web"].read, dedup.sources["web"].documents) == (4, 2)
    assert dedup.sources["web"].removed == {"duplicates_removed": 2}
    assert merge.sources["web"].documents == 2 and _results(published=False)[2].sources["web"].documents == 0
    assert ingest.documents_read() == 5 and not ingest.nothing_left()
    assert (
        stage("dedup")
        .result({"sources": {"web": {"documents": 3, "duplicates_removed": 3, "survivors": 0}}})
        .nothing_left()
    )


def _account(ingest, dedup, merge):
    return account(STAGES, {r.stage: r for r in (ingest, dedup, merge)})


def test_accounting_balances_and_names_a_gap():
    assert _account(*_results()) == {
        "web": {
            "documents_read": 5,
            "rejected": 1,
            "duplicates_removed": 2,
            "removed": {"duplicates_removed": 2},
            "survivors": 2,
            "written": 2,
        }
    }
    with pytest.raises(AccountingError, match="web: 2 survivors but 1 documents in merge-blend"):
        _account(*_results(written_web=1))
    with pytest.raises(AccountingError, match="web: 2 survivors but 0 documents"):
        _account(*_results(published=False))


def test_nothing_left_names_the_removal_that_emptied_the_run():
    """Decontamination removed every document: the error says so instead of blaming paths (issue #28, 12)."""
    from pipeline.run.runner import StageError, _stop_if_nothing_left

    counts = {"sources": {"web": {"documents": 3, "duplicates_removed": 0, "contaminated": 3, "survivors": 0}}}
    with pytest.raises(StageError) as err:
        _stop_if_nothing_left(stage("dedup"), stage("dedup").result(counts), True)
    assert "removed 3 as contaminated" in str(err.value) and "paths" not in str(err.value)
    empty = {"sources": {"web": {"documents_read": 2, "rejected": 2, "documents": 0}}}
    with pytest.raises(StageError, match="check the sources' paths, format and text_field"):
        _stop_if_nothing_left(stage("ingest"), stage("ingest").result(empty), True)


def test_one_stage_command_runs_only_that_stage_as_the_readme_says(tmp_path):
    """``python -m pipeline dedup`` runs dedup alone and refuses when ingest has not finished (issue #28, 15)."""
    from pathlib import Path

    from pipeline.run.runner import StageError, run_stages
    from pipeline.stage_api.context import RunContext
    from tests.config_texts import config_text, write_jsonl

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("python -m pipeline dedup --config conf/local.yaml  "))
    assert "only that stage" in line and "the ones before it must have finished" in line
    config = load_config_text(config_text(write_jsonl(tmp_path), output=str(tmp_path / "run")))
    with pytest.raises(StageError, match="stage 'ingest' has not finished .*; run it first"):
        run_stages(RunContext(config), only="dedup", log=lambda *_: None)


def test_ingest_keys_added_later_leave_the_fingerprint_of_existing_runs_alone(base):
    """A scheduled run made before include_hidden, html_extractor and max_record_bytes existed resumes after an
    upgrade: at their defaults those keys are not part of ingest's recorded inputs; set, they are."""
    inputs = stage("ingest").inputs(load_config_text(base))
    assert sorted(inputs["ingest"]) == ["excerpt_chars", "max_text_bytes", "partitions", "split_bytes"]
    changed = stage("ingest").inputs(load_config_text(base, ["ingest.include_hidden=true"]))
    assert changed["ingest"]["include_hidden"] is True
