"""Conformance: the training-indices stage writes the files megatron-core 0.16.1's builder writes, byte for byte,
and the builder, pointed at them with every building function disabled, loads every split."""

from __future__ import annotations

import filecmp
import os

import numpy as np
import pytest

from pipeline.blend.indices import build_blending_indices
from pipeline.blend.io import write_blend
from pipeline.config import load_config_text
from pipeline.megatron import IndexedDatasetWriter
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.stage_api.stage import Data
from pipeline.training_indices.stage import STAGE
from tests.megatron_builder import GPT2_IDENTIFIERS, megatron_build
from tests.oracles import require_oracle

torch = require_oracle("torch")
gpt_dataset = require_oracle("megatron.core.datasets.gpt_dataset")
helpers = require_oracle("megatron.core.datasets.helpers")

TOKENIZER = GPT2_IDENTIFIERS

CASES = {
    # name: (documents per source, longest document, config lines)
    "one-source-one-epoch": ([400], 300, "sequence_length: 64\n  samples: [50, 10, 5]\n  split: '90,6,4'"),
    "one-source-epochs-long-sequences": (
        [120],
        40,
        "sequence_length: 512\n  samples: [90, 12, 9]\n  split: '80,10,10'\n  random_seed: 7",
    ),
    "three-sources-epochs": (
        [3000, 1500, 1000],
        200,
        "sequence_length: 32\n  samples: [20000, 300, 100]\n  split: '969, 30, 1'",
    ),
    "three-sources-epochs-no-extra-token": (
        [200, 90, 60],
        120,
        "sequence_length: 48\n  samples: [700, 120, 40]\n  split: '90,7,3'\n  add_extra_token_to_sequence: false\n"
        "  drop_last_partial_validation_sequence: false\n  mid_level_dataset_surplus: 0.05",
    ),
}


def _write_run(run, documents, longest, rng):
    names = [f"src{k}" for k in range(len(documents))]
    for name, count in zip(names, documents, strict=True):
        lengths = rng.integers(1, longest, size=count)
        with IndexedDatasetWriter(str(run / layout.MEGATRON / name), dtype=np.uint16) as writer:
            for n in lengths:
                writer.add_document(rng.integers(0, 50000, size=int(n)).astype(np.uint16))
    weights = [float(w) for w in rng.integers(1, 10, size=len(names))]
    index, sample = build_blending_indices(weights, 10, sizes=list(documents), oversample="wrap")
    write_blend(
        str(run / layout.BLEND),
        index,
        sample,
        sources=names,
        prefixes=[f"{layout.MEGATRON}/{n}" for n in names],
        weights=weights,
        sizes=list(documents),
        mode="fixed",
        oversample="wrap",
    )
    return names


def _megatron_build(config, counts, cache):
    return megatron_build(config.training, counts["data_path"], cache, TOKENIZER)


def _no_building(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("megatron-core tried to build an index instead of loading it")

    for name in ("build_sample_idx", "build_blending_indices", "build_exhaustive_blending_indices"):
        monkeypatch.setattr(helpers, name, refuse)
    monkeypatch.setattr(gpt_dataset, "_build_document_index", refuse)
    monkeypatch.setattr(gpt_dataset, "_build_shuffle_index", refuse)
    monkeypatch.setattr(np, "save", refuse)


# One case of each shape (one source, blended sources) runs on Spark 4; the others vary data and settings.
SAME_PLAN = {"one-source-epochs-long-sequences", "three-sources-epochs-no-extra-token"}


@pytest.mark.parametrize(
    "case", [pytest.param(c, marks=pytest.mark.same_plan) if c in SAME_PLAN else c for c in sorted(CASES)]
)
def test_stage_writes_megatron_cores_files_and_megatron_core_loads_them(spark, tmp_path, monkeypatch, case):
    documents, longest, training = CASES[case]
    run = tmp_path / "run"
    names = _write_run(run, documents, longest, np.random.default_rng(len(case)))
    config = load_config_text(
        f"output: {run}\nsources:\n"
        + "".join(f"  - name: {n}\n    paths: [x.jsonl]\n" for n in names)
        + f"tokenizer: {{train: true}}\ntraining:\n  tokenizer: {TOKENIZER}\n  {training}\n"
    )
    counts = STAGE.run(
        RunContext(config, spark=spark),
        {"blend": Data(layout.BLEND, "merge-blend"), "megatron": Data(layout.MEGATRON, "merge-blend")},
    )
    ours = run / layout.MEGATRON_CACHE
    # megatron-core's BlendedDataset asks torch.distributed for the rank even when it is not initialised
    monkeypatch.setattr(torch.distributed, "get_rank", lambda *a: 0)
    reference = tmp_path / "reference"
    built = _megatron_build(config, counts, reference)

    theirs = sorted(os.listdir(reference))
    assert sorted(os.listdir(ours)) == theirs
    per_dataset = 4 * len(names) * 3 + (3 * 3 if len(names) > 1 else 0)
    assert len(theirs) == per_dataset  # every split of every source (and every blend) is cached
    match, mismatch, errors = filecmp.cmpfiles(reference, ours, theirs, shallow=False)
    assert (mismatch, errors) == ([], [])
    train = [r for r in counts["datasets"] if r["split"] == "train"]
    assert any(r["epochs"] > 1 for r in train) == ("epochs" in case)
    if "three" in case:  # the last epoch shuffled on its own, and not
        assert {r["separate_final_epoch"] for r in counts["datasets"]} == {True, False}

    with monkeypatch.context() as patched:
        _no_building(patched)
        loaded = _megatron_build(config, counts, ours)
    assert sorted(os.listdir(ours)) == theirs  # nothing was written
    for split, (want, got) in enumerate(zip(built, loaded, strict=True)):
        assert got is not None and len(got) == len(want) > 0, split
        if len(names) > 1:
            assert np.array_equal(got.dataset_index, want.dataset_index)
            assert np.array_equal(got.datasets[0].shuffle_index, want.datasets[0].shuffle_index)
        else:
            assert np.array_equal(got.sample_index, want.sample_index)


@pytest.mark.same_plan  # the one-source plan of the cases above; only the derived identifiers differ
@pytest.mark.parametrize("kind", ["tiktoken", "huggingface", "sentencepiece"])
def test_derived_tokenizer_identifiers_hit_megatron_cores_cache_with_its_own_tokenizer(
    spark, tmp_path, monkeypatch, kind
):
    """training.tokenizer left out: megatron-core, given the tokenizer object it builds for the kind, loads the
    stage's files (same names, every building function disabled)."""
    from tests.tokenizer_kinds import megatron_built, megatron_tiktoken_json, mistral_v1_path, train_tokenizer_json

    path = {
        "tiktoken": lambda: megatron_tiktoken_json(tmp_path / "tiktoken.json"),
        "huggingface": lambda: train_tokenizer_json(["some text to train on"] * 20, tmp_path / "tokenizer.json", 300),
        "sentencepiece": mistral_v1_path,
    }[kind]()
    (tmp_path / "tokenizer_config.json").write_text('{"tokenizer_class": "PreTrainedTokenizerFast"}')
    extra = {"tiktoken": 'special_tokens: {"<s>": 1}', "huggingface": 'eod_token: "<|end_of_text|>"'}.get(kind, "")
    run = tmp_path / "run"
    names = _write_run(run, [300], 200, np.random.default_rng(3))
    config = load_config_text(
        f"output: {run}\nsources:\n  - name: {names[0]}\n    paths: [x.jsonl]\n"
        f'tokenizer: {{kind: {kind}, path: "{path}", {extra}}}\n'
        "training:\n  sequence_length: 64\n  samples: [50, 10, 5]\n  split: '90,6,4'\n"
    )
    counts = STAGE.run(
        RunContext(config, spark=spark),
        {"blend": Data(layout.BLEND, "merge-blend"), "megatron": Data(layout.MEGATRON, "merge-blend")},
    )
    identifiers = megatron_built(kind, str(path)).unique_identifiers
    monkeypatch.setattr(torch.distributed, "get_rank", lambda *a: 0)
    with monkeypatch.context() as patched:
        _no_building(patched)
        loaded = megatron_build(config.training, counts["data_path"], run / layout.MEGATRON_CACHE, identifiers)
    assert all(d is not None and len(d) > 0 for d in loaded)
