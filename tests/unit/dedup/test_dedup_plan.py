"""DedupPlan: the dedup parameters resolved once from the config (bands/rows against datasketch)."""

from __future__ import annotations

import dataclasses

import pytest
from datasketch import lsh as datasketch_lsh

from pipeline.config import load_config_text
from pipeline.dedup.plan import DedupPlan
from tests.config_texts import config_text, write_jsonl


@pytest.fixture()
def base(tmp_path):
    return config_text(write_jsonl(tmp_path), sources={"web": "priority: 2", "wiki": "priority: 5"})


@pytest.mark.parametrize(("threshold", "num_perm"), [(0.7, 256), (0.5, 128), (0.85, 64), (0.3, 16)])
def test_bands_and_rows_are_datasketchs_optimum_when_not_given(base, threshold, num_perm):
    config = load_config_text(base, [f"dedup.threshold={threshold}", f"dedup.num_perm={num_perm}"])
    plan = DedupPlan.from_config(config)
    assert (plan.lsh.bands, plan.lsh.rows) == datasketch_lsh._optimal_param(threshold, num_perm, 0.5, 0.5)
    assert plan.threshold == threshold and plan.lsh.num_perm == num_perm


def test_given_bands_and_rows_are_kept_and_every_setting_reaches_the_plan(base):
    config = load_config_text(
        base,
        [
            "dedup.bands=16",
            "dedup.rows=8",
            "dedup.survivor=priority",
            "dedup.engine=graphframes",
            "dedup.verify=false",
            "dedup.min_tokens=9",
            "dedup.shingle=char",
            "dedup.ngram=3",
            "dedup.seed=7",
        ],
    )
    plan = DedupPlan.from_config(config)
    assert (plan.lsh.bands, plan.lsh.rows) == (16, 8)
    assert (plan.survivor, plan.engine, plan.verify, plan.min_tokens) == ("priority", "graphframes", False, 9)
    assert (plan.lsh.shingle, plan.lsh.ngram, plan.lsh.seed) == ("char", 3, 7)
    assert plan.priorities == {"web": 2, "wiki": 5} and plan.sources == ("web", "wiki")


def test_report_parameters_hold_the_lsh_parameters_and_the_driver_choices(base):
    plan = DedupPlan.from_config(load_config_text(base))
    params = plan.report_parameters()
    lsh_fields = {f.name for f in dataclasses.fields(plan.lsh)}
    assert set(params) == lsh_fields | {"threshold", "verify", "exact_prepass", "engine", "survivor"}
    assert params["bands"] * params["rows"] <= params["num_perm"] and params["threshold"] == 0.7


def test_a_run_builds_one_plan_and_a_changed_section_another(base):
    config = load_config_text(base)
    plan = DedupPlan.from_config(config)
    assert DedupPlan.from_config(config) is plan  # the stage, its precheck, resume check and index commit share it
    assert DedupPlan.from_config(load_config_text(base)) is plan  # same values, same plan
    config.dedup.threshold = 0.8
    assert DedupPlan.from_config(config).threshold == 0.8 and plan.threshold == 0.7
    config.dedup.threshold, config.sources[0].priority = 0.7, 9
    assert DedupPlan.from_config(config).priorities == {"web": 9, "wiki": 5}


def test_an_index_refuses_a_change_of_each_lsh_parameter_naming_it():
    """The parameters a dedup index is tied to are LshParams' fields (one list, dataclasses.fields), each named
    when it differs."""
    from pipeline.dedup.batches import LSH_KEYS, LshParams
    from pipeline.dedup.index.head import Head, IndexParameterError, check_parameters

    params = dataclasses.asdict(LshParams(128, 1, 5, "affine32", "sha1", "word", None, 16, 8))
    assert tuple(params) == LSH_KEYS and len(LSH_KEYS) == 9
    check_parameters(Head(params), dict(params), "idx")
    for key in LSH_KEYS:
        with pytest.raises(IndexParameterError, match=rf"built with dedup\.{key} = "):
            check_parameters(Head(params), {**params, key: "other"}, "idx")
