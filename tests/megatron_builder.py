"""megatron-core 0.16.1's own GPTDataset/BlendedDataset builder over a run's blend: the oracle the training-indices
caches are compared with; its C++ blending helper, the blend loop's (tests, bench/bench_megatron.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tests.oracles import require_oracle

# the identifiers a GPT-2 tokenizer class of megatron-core reports; the tests' configs name it in training.tokenizer
GPT2_IDENTIFIERS = {"class": "HuggingFaceTokenizer", "tokenizer_path": ["/models/gpt2"], "vocab_extra_ids": 0}


def megatron_build(training: Any, data_path: str, cache: Path, identifiers: dict = GPT2_IDENTIFIERS) -> Any:
    """Build (or load from ``cache``) the datasets of ``training`` (a run's TrainingConfig) over ``data_path``
    (megatron's "weight prefix ..." list) with megatron-core's BlendedMegatronDatasetBuilder."""
    gpt_dataset = require_oracle("megatron.core.datasets.gpt_dataset")
    builder_mod = require_oracle("megatron.core.datasets.blended_megatron_dataset_builder")
    mcore_utils = require_oracle("megatron.core.datasets.utils")

    class Tokenizer:
        unique_identifiers = identifiers
        vocab_size = 50257

    mconfig = gpt_dataset.GPTDatasetConfig(
        random_seed=training.random_seed,
        sequence_length=training.sequence_length,
        blend=mcore_utils.get_blend_from_list(data_path.split()),
        split=training.split,
        path_to_cache=str(cache),
        tokenizer=Tokenizer(),
        reset_position_ids=False,
        reset_attention_mask=False,
        eod_mask_loss=False,
        add_extra_token_to_sequence=training.add_extra_token_to_sequence,
        drop_last_partial_validation_sequence=training.drop_last_partial_validation_sequence,
        mid_level_dataset_surplus=training.mid_level_dataset_surplus,
    )
    builder = builder_mod.BlendedMegatronDatasetBuilder(gpt_dataset.GPTDataset, training.samples, lambda: True, mconfig)
    return builder.build()


def megatron_blend(weights: Any, size: int, normalized: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """What megatron-core's BlendedDataset does: ``weights`` through its ``normalize()`` (unless ``normalized``),
    int16 / int64 zeros filled by the C++ helper ``build_blending_indices``."""
    helpers_cpp = require_oracle("megatron.core.datasets.helpers_cpp")
    if not normalized:
        weights = require_oracle("megatron.core.datasets.utils").normalize(list(weights))
    w = np.asarray(weights, dtype=np.float64)
    index, sample = np.zeros(size, np.int16), np.zeros(size, np.int64)
    helpers_cpp.build_blending_indices(index, sample, w, len(w), size, False)
    return index, sample
