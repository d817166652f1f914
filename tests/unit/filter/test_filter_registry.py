"""A new filter with typed options is one module and nothing else: this test module defines one, registered by its
decorator, and runs it through config checking, the stage's plan and its batch step.
Contract: docs/stages.md, The filter stage."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pytest

from pipeline.config import ConfigError, PipelineConfig, load_config_text
from pipeline.filter import entries, registry
from pipeline.filter.base import BaseFilter, RuleThreshold
from pipeline.filter.batches import filter_partition, output_schema
from pipeline.filter.options import FilterOptions, OptionError
from pipeline.filter.plan import make_plan
from pipeline.filter.registry import register
from pipeline.run.preflight import check_stage_configs
from pipeline.stage_api.filter import FilterResult


@dataclass(frozen=True)
class VowelOptions(FilterOptions):
    """Options of the test filter."""

    min_vowel_share: float = 0.2
    """Smallest share of a text's letters that are vowels, in [0, 1]."""
    vowels: str = "aeiou"
    """What counts as a vowel."""

    def check(self) -> None:
        if not 0 <= self.min_vowel_share <= 1:
            raise OptionError("min_vowel_share", f"must be a fraction in [0, 1], got {self.min_vowel_share!r}")
        if not self.vowels:
            raise OptionError("vowels", "must not be empty")


@register("test_vowels")
class VowelFilter(BaseFilter):
    """Drops a document whose letters hold too few vowels (``test_vowels.few_vowels``)."""

    name = "test_vowels"
    Options = VowelOptions
    RULE_THRESHOLDS = {"few_vowels": RuleThreshold("min", "min_vowel_share")}

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        shares = []
        for text in batch.column("text").to_pylist():
            letters = [c for c in text.lower() if c.isalpha()]
            shares.append(sum(c in self.options.vowels for c in letters) / max(len(letters), 1))
        share = np.asarray(shares, np.float64)
        keep = share >= self.options.min_vowel_share
        reason = [None if k else "few_vowels" for k in keep]
        detail = [None if k else f"vowel share {s:.2f}" for k, s in zip(keep, share, strict=True)]
        return FilterResult(keep, reason, detail, measures={"few_vowels": share})


def _config(tmp_path, entry: str):
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "x"}\n')
    text = f"output: {tmp_path / 'run'}\ntokenizer: {{train: true}}\nsources:\n  - {{name: web, paths: [{data}]}}\n"
    return load_config_text(text + f"filter:\n  - {entry}\n")


def test_the_decorator_registers_it() -> None:
    assert registry.known("test_vowels") and registry.filter_class("test_vowels") is VowelFilter
    assert registry.target("test_vowels") == f"{__name__}:VowelFilter"
    assert {"language", "gopher_repetition", "gopher_quality", "c4", "fineweb", "pii"} <= set(registry.names())


def test_config_parsing_types_checks_and_names_the_key(tmp_path) -> None:
    config = _config(tmp_path, "{name: test_vowels, min_vowel_share: 0.3}")
    check_stage_configs(config)
    assert entries.effective(config) == {"web": [{"name": "test_vowels", "min_vowel_share": 0.3, "vowels": "aeiou"}]}
    for entry, key in [
        ("{name: test_vowels, min_vowel_share: 1.5}", "filter.0.min_vowel_share"),
        ("{name: test_vowels, min_vowel_share: .nan}", "filter.0.min_vowel_share"),
        ("{name: test_vowels, vowels: ''}", "filter.0.vowels"),
        ("{name: test_vowels, vowels: [a]}", "filter.0.vowels"),
        ("{name: test_vowels, consonants: b}", "filter.0.consonants"),
    ]:
        with pytest.raises(ConfigError) as caught:
            check_stage_configs(_config(tmp_path, entry))
        assert caught.value.key == key and "\n" not in str(caught.value)


def test_the_stage_s_batch_step_runs_it(tmp_path) -> None:
    config = _config(tmp_path, "{name: test_vowels, min_vowel_share: 0.3}")
    plan = make_plan(config)
    texts = ["a tame sentence of words", "rhythm myths by crypts", "strength"]
    batch = pa.RecordBatch.from_pydict(
        {"doc_id": pa.array([1, 2, 3], pa.int64()), "source": ["web"] * 3, "text": texts}
    )
    schema = output_schema(batch.schema)
    rows = pa.Table.from_batches(list(filter_partition(iter([batch]), plan, schema))).to_pylist()
    kept = [r["doc_id"] for r in rows if r["kind"] == "kept"]
    dropped = {r["doc_id"]: (r["reason"], r["threshold"]) for r in rows if r["kind"] == "dropped"}
    assert kept == [1]  # 8 vowels of 20 letters; the others hold 0 of 19 and 1 of 8
    assert dropped == {2: ("test_vowels.few_vowels", 0.3), 3: ("test_vowels.few_vowels", 0.3)}


def test_its_declarations_reach_the_plan_the_stage_and_the_checks(tmp_path) -> None:
    """RULE_THRESHOLDS give the summary's threshold, direction and bins; READS the stage's optional reads; the
    check_config hook runs with the stage's config checks (nothing in the stage names the filter)."""
    from pipeline.filter.stage import STAGE

    config = _config(tmp_path, "{name: test_vowels, min_vowel_share: 0.3}")
    rule = make_plan(config).rules["test_vowels.few_vowels"]
    assert (rule["threshold"], rule["direction"]) == (0.3, "min")
    assert make_plan(config).edges("test_vowels.few_vowels")[-1] == 1.0  # a fraction: [0, 1]
    assert "test_vowel_lists" not in STAGE.optional_reads
    VowelFilter.READS = ("test_vowel_lists",)
    VowelFilter.check_config = classmethod(_refuse_web)  # type: ignore[method-assign,assignment]
    try:
        assert "test_vowel_lists" in STAGE.optional_reads
        with pytest.raises(ConfigError, match="'sources.0.name': no web"):
            STAGE.check_config(config)
    finally:
        del VowelFilter.READS, VowelFilter.check_config


def _refuse_web(cls: type, config: PipelineConfig) -> None:
    if config.sources[0].name == "web":
        raise ConfigError("sources.0.name", "no web")


def test_a_class_that_is_no_base_filter_is_refused() -> None:
    class Plain:
        name = "test_plain"
        Options = VowelOptions

    with pytest.raises(TypeError, match="must subclass pipeline.filter.base.BaseFilter"):
        register("test_plain")(Plain)
    assert not registry.known("test_plain")
