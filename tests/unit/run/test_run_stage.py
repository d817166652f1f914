"""The stage contract: registered Stage objects, typed per-source tallies, the accounting on them."""

from __future__ import annotations

import json
from pathlib import Path

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
    "blend.rehydrate": "blend.rehydrate={1: 1, 2: 2}",
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
        "ingest", "train-classifier", "filter", "dedup", "spans", "train-tokenizer", "tokenize", "merge-blend",
        "training-indices"
    )  # fmt: skip
    assert all(isinstance(s, Stage) and type(s).run is not Stage.run for s in STAGES)
    assert stage("dedup") is STAGES[3]


@pytest.mark.parametrize(
    "name", ["ingest", "filter", "dedup", "train-tokenizer", "tokenize", "merge-blend", "training-indices"]
)
@pytest.mark.parametrize("key", sorted(OVERRIDES))
def test_a_stage_depends_on_exactly_its_declared_config_keys(base, name, key):
    """A stage's recorded inputs change with a key it declares and with no other."""
    st = stage(name)
    before = st.config_values(load_config_text(base))
    after = st.config_values(load_config_text(base, [OVERRIDES[key]]))
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

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("python -m pipeline dedup --config conf/local.yaml  "))
    assert "only that stage" in line and "the ones before it must have finished" in line
    config = load_config_text(config_text(write_jsonl(tmp_path), output=str(tmp_path / "run")))
    with pytest.raises(StageError, match="stage 'ingest' has not finished .*; run it first"):
        run_stages(RunContext(config), only="dedup", log=lambda *_: None)


LEGACY = json.loads((Path(__file__).resolve().parents[2] / "golden" / "markers_7ffb06c.json").read_text())


def _resume(config, markers: dict[str, dict]) -> dict[str, str]:
    """Stage -> 'reuse' (or the StageError's message) for each stage over these markers, the upstream of a
    reused stage being its marker's fingerprint, as in run_stages."""
    from pipeline.run.runner import StageError, _decide, stage_fingerprint, stage_inputs

    upstream, found = "", {}
    for st in STAGES:
        if not st.applies(config):
            continue
        values = stage_inputs(st, config)
        marker = markers[st.name]
        try:
            found[st.name] = _decide(st, marker, stage_fingerprint(st.version, upstream, values), upstream, values,
                                     "RUN", forced=False, wanted=True)  # fmt: skip
        except StageError as exc:
            found[st.name] = str(exc)
        upstream = marker["fingerprint"]
    return found


@pytest.mark.parametrize("name", ["plain", "index"])
def test_markers_written_before_config_versions_still_resume(name):
    """Every stage of a run finished at 7ffb06c (ingest and dedup then left keys at their defaults out of their
    recorded inputs) is reused by this version, whose markers record every key."""
    config, markers = load_config_text(LEGACY[name]["config"]), LEGACY[name]["markers"]
    assert _resume(config, markers) == {name: "reuse" for name in markers}
    assert stage("ingest").version > 1 and stage("dedup").version > 1  # the legacy path is the one taken


def test_an_old_marker_compared_after_upgrade_names_the_changed_key():
    config_text = LEGACY["plain"]["config"]
    found = _resume(load_config_text(config_text, ["ingest.include_hidden=true"]), LEGACY["plain"]["markers"])
    assert "finished with a different config (changed: ingest.include_hidden)" in found["ingest"]
    found = _resume(load_config_text(config_text, ["dedup.index=/data/index"]), LEGACY["plain"]["markers"])
    assert found["ingest"] == "reuse" and "(changed: dedup.index)" in found["dedup"]


MARKERS_E07B93C = json.loads((Path(__file__).resolve().parents[2] / "golden" / "markers_e07b93c.json").read_text())


@pytest.mark.parametrize("name", ["plain", "rehydrate"])
def test_markers_written_while_rehydrate_keys_were_left_out_still_resume(name):
    """Markers of e07b93c (dedup version 2 left ``cluster_sizes`` out when rehydration was off, merge-blend
    version 1 left ``blend.rehydrate`` out) are reused by this version, which records both whatever their value."""
    config, markers = load_config_text(MARKERS_E07B93C[name]["config"]), MARKERS_E07B93C[name]["markers"]
    assert _resume(config, markers) == {name: "reuse" for name in markers}
    assert stage("dedup").version > markers["dedup"]["version"]  # the upgrade path is the one taken
    assert stage("merge-blend").version > markers["merge-blend"]["version"]


@pytest.mark.parametrize(
    ("name", "override"), [("plain", "blend.rehydrate={1: 1, 2: 2}"), ("rehydrate", "blend.rehydrate=null")]
)
def test_an_old_marker_is_not_reused_when_rehydration_changed(name, override):
    config = load_config_text(MARKERS_E07B93C[name]["config"], [override])
    found = _resume(config, MARKERS_E07B93C[name]["markers"])
    assert found["ingest"] == found["tokenize"] == "reuse"
    assert "finished with a different config (changed: cluster_sizes)" in found["dedup"]
    assert "finished with a different config (changed: blend.rehydrate)" in found["merge-blend"]


def test_dedup_and_merge_blend_record_the_rehydrate_keys_whatever_their_value(base):
    """No key is left out of a recorded form when off (the form is versioned instead, Stage.upgrade)."""
    off, on = load_config_text(base), load_config_text(base, [OVERRIDES["blend.rehydrate"]])
    for name in ("dedup", "merge-blend"):
        assert sorted(stage(name).config_values(off)) == sorted(stage(name).config_values(on))
    assert stage("merge-blend").config_values(off)["blend"]["rehydrate"] is None
    assert stage("dedup").config_values(off)["cluster_sizes"] is False
    assert stage("dedup").config_values(on)["cluster_sizes"] is True


def test_a_marker_of_a_newer_schema_says_so_in_one_line():
    markers = {k: dict(v) for k, v in LEGACY["plain"]["markers"].items()}
    markers["ingest"]["version"] = 9
    why = _resume(load_config_text(LEGACY["plain"]["config"]), markers)["ingest"]
    assert "\n" not in why and "was finished by a newer version (config schema 9; this one knows 2)" in why


def test_ingest_records_every_key_of_its_section(base):
    """Ingest's recorded inputs hold every key of its section (none is left out at its default)."""
    from dataclasses import fields

    from pipeline.config.schema import IngestConfig

    inputs = stage("ingest").config_values(load_config_text(base))
    assert sorted(inputs["ingest"]) == sorted(f.name for f in fields(IngestConfig))
    changed = stage("ingest").config_values(load_config_text(base, ["ingest.include_hidden=true"]))
    assert changed["ingest"]["include_hidden"] is True


def test_the_runner_wires_each_read_to_the_latest_stage_passing_it(base):
    """Dedup reads the filter stage's documents when it runs, else ingest's; tokenize reads dedup's survivors;
    merge-blend the shards tokenize passes on and the documents it read (docs/stages.md, The Stage contract)."""
    from pipeline.run.runner import wiring

    plain = wiring(STAGES, load_config_text(base))
    assert "filter" not in plain and plain["dedup"] == {"documents": ("ingest", "documents")}
    assert plain["tokenize"] == {
        "documents": ("dedup", "dedup/survivors"),
        "tokenizer": ("train-tokenizer", "tokenizer"),
    }
    # and the documents tokenize read (their quality_bucket, for a source the blend weighs by bucket)
    assert plain["merge-blend"] == {
        "shards": ("tokenize", "shards"),
        "documents": ("dedup", "dedup/survivors"),
        "cluster_sizes": ("dedup", "dedup/cluster_sizes"),  # opened with blend.rehydrate only
    }
    filtered = wiring(STAGES, load_config_text(base, [OVERRIDES["filter"]]))
    assert filtered["filter"] == {"documents": ("ingest", "documents")}
    assert filtered["dedup"] == {"documents": ("filter", "filter/documents")}


def test_the_hand_offs_by_file_are_declared_reads(base):
    """The trained classifier and merge-blend's datasets (like the trained tokenizer and dedup's cluster sizes,
    above) reach the stage that opens them as declared inputs, not by a path of its own."""
    from pipeline.run.runner import wiring

    trained = wiring(STAGES, load_config_text(base, [OVERRIDES["training"]]))
    assert trained["training-indices"] == {"blend": ("merge-blend", "blend"), "megatron": ("merge-blend", "megatron")}
    classifier = "classifier={positives: [{name: hq, paths: [/data/hq.txt], format: text}], negatives: {from_run: 10}}"
    ranked = wiring(STAGES, load_config_text(base, ["filter=[{name: fasttext_classifier, model: run}]", classifier]))
    assert ranked["filter"] == {
        "documents": ("ingest", "documents"),
        "classifier": ("train-classifier", "classifier/model.bin"),
    }


def test_an_optional_read_no_stage_passes_is_left_out(base):
    """Without tokenizer.train no train-tokenizer stage runs: tokenize gets no ``tokenizer`` input (it reads the
    config's files) and the run is wired all the same; without a classifier section the filter gets no model."""
    from pipeline.run.runner import wiring

    given = load_config_text(base, ["tokenizer={vocab: /t/vocab.json, merges: /t/merges.txt}", OVERRIDES["filter"]])
    wired = wiring(STAGES, given)
    assert "train-tokenizer" not in wired and wired["tokenize"] == {"documents": ("dedup", "dedup/survivors")}
    assert wired["filter"] == {"documents": ("ingest", "documents")}


def test_a_read_no_earlier_stage_passes_fails_before_any_work(base):
    from pipeline.run.runner import StageError, wiring

    with pytest.raises(StageError, match="stage 'tokenize' reads 'documents', which no stage before it passes on"):
        wiring((stage("tokenize"), stage("merge-blend")), load_config_text(base))


def test_a_stage_names_the_tables_of_its_removals():
    """explain and sample find each removal's table through the stage that removed it (Stage.removal_tables, once
    a central map in the layout): the same tables as before, each among what its stage writes."""
    from pipeline.cli.explain import REMOVAL_TABLES

    assert REMOVAL_TABLES == {  # layout.REMOVAL_TABLES at e07b93c
        "<filter>.<rule>": "filter/dropped",
        "older_capture": "older_captures",
        "contaminated": "dedup/contaminated",
        "duplicates_of_earlier_runs": "dedup/earlier_runs",
        "spans_emptied": "spans/emptied",
        "spans_too_short": "spans/too_short",
    }
    for st in STAGES:
        for table in st.removal_tables.values():
            assert any(table == part or table.startswith(part + "/") for part in st.writes), (st.name, table)
