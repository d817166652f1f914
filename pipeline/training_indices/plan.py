"""What to build for a ``training`` section: one GPTDataset per (source, split), one BlendedDataset per split.

Follows megatron-core 0.16.1's ``BlendedMegatronDatasetBuilder`` with ``blend`` and ``split`` (one
distribution for every split; docs/training_indices.md, What is built):

* one source, given without a weight: a GPTDataset per non-empty split asking ``samples[split]``; no blend.
* several: the ``--data-path`` weights ``g`` (what the training job parses) are normalised to ``w``; source
  ``k`` is asked ``ceil(ceil(samples * w_k) * (1 + surplus))`` samples per split, and each split's
  BlendedDataset has ``size = sum_k ceil(samples * w_k)`` and weights ``normalize(w)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.blend.megatron_args import megatron_data_path, parse_blend
from pipeline.config import TrainingConfig
from pipeline.training_indices import describe


@dataclass(frozen=True)
class GptTask:
    """One GPTDataset: which source and split, its sample count, its identifiers and file names."""

    source: str
    prefix: str  # where this run reads the source's .idx
    split: int  # 0 train, 1 valid, 2 test
    bookends: tuple[float, float]
    num_samples: int
    identifiers: dict[str, Any]
    files: dict[str, str]
    sequence_length: int
    seed: int
    extra: bool
    drop_last: bool


@dataclass(frozen=True)
class BlendTask:
    """One BlendedDataset: its split, the GPT tasks it blends (in order), weights, size, identifiers, files."""

    split: int
    sources: list[str]
    weights: list[float]
    size: int
    identifiers: dict[str, Any]
    files: dict[str, str]
    gpt: list[GptTask] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    """Everything the stage builds, and the ``--data-path`` the training job must be given."""

    data_path: str
    gpt: list[GptTask]
    blends: list[BlendTask]


def dataset_prefix(data_path: str, relative: str) -> str:
    """``<data_path>/<relative>`` as the training job spells the dataset (its cache key holds this string)."""
    return f"{data_path.rstrip('/')}/{relative}"


def make_plan(
    cfg: TrainingConfig,
    data_path: str,
    sources: list[str],
    relative: list[str],
    local: list[str],
    weights: list[float] | None,
) -> Plan:
    """The plan for ``sources`` (published, in blend order): ``relative`` prefixes inside the run
    (``megatron/<source>``), ``local`` ones this run reads, and their blend weights (ignored for one source)."""
    prefixes = [dataset_prefix(data_path, r) for r in relative]
    matrix = describe.split_matrix(describe.split_vector(cfg.split))
    common: dict[str, Any] = {
        "random_seed": cfg.random_seed,
        "sequence_length": cfg.sequence_length,
        "split_string": cfg.split,
        "matrix": matrix,
        "tokenizer": cfg.tokenizer,
    }

    def gpt(k: int, split: int, num_samples: int) -> GptTask:
        bookends = matrix[split]
        assert bookends is not None
        ids = describe.gpt_identifiers(prefixes[k], num_samples, describe.SPLITS[split], **common)
        return GptTask(
            sources[k],
            local[k],
            split,
            bookends,
            num_samples,
            ids,
            describe.file_names(ids),
            cfg.sequence_length,
            cfg.random_seed,
            cfg.add_extra_token_to_sequence,
            cfg.drop_last_partial_validation_sequence if split == 1 else True,
        )

    splits = [i for i in range(len(describe.SPLITS)) if matrix[i] is not None]
    if len(sources) == 1:
        path = megatron_data_path([1.0], prefixes).split(" ", 1)[1]  # checks the prefix; no weight
        return Plan(path, [gpt(0, i, cfg.samples[i]) for i in splits], [])
    if weights is None or len(weights) != len(sources):
        raise ValueError(f"need one weight per source for {sources}, got {weights}")
    path = megatron_data_path(weights, prefixes)
    given, _ = parse_blend(path)  # the doubles the training job reads back from --data-path
    assert given is not None
    w = describe.normalize(given)
    buffer = describe.samples_per_source(w, cfg.samples, cfg.mid_level_dataset_surplus)
    target = describe.samples_per_source(w, cfg.samples)
    tasks: list[GptTask] = []
    blends: list[BlendTask] = []
    for i in splits:
        members = [gpt(k, i, buffer[k][i]) for k in range(len(sources))]
        tasks += members
        size = sum(target[k][i] for k in range(len(sources)))
        blend_w = describe.normalize(w)
        ids = describe.blended_identifiers([m.identifiers for m in members], describe.SPLITS[i], blend_w, size)
        blends.append(BlendTask(i, list(sources), blend_w, size, ids, describe.file_names(ids), members))
    return Plan(path, tasks, blends)
