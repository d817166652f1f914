"""What megatron-core 0.16.1 derives from its config before it builds anything (docs/training_indices.md, Cache keys).

The split string becomes a split vector (the numbers in it, padded to three, divided by their sum) and a
split matrix of book-ends (``None`` for an empty split); a split's documents are
``[round(lo * n), round(hi * n))`` with Python's rounding. Blend weights are divided by their sum, and each
source is asked for ``ceil(ceil(samples * weight) * (1 + surplus))`` samples of each split. A dataset's
cache key is the MD5 of its description, a JSON text (indent 4) of its unique identifiers.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

SPLITS = ("train", "valid", "test")
GPT = "GPTDataset"
BLENDED = "BlendedDataset"
GPT_FILES = ("document_index", "sample_index", "shuffle_index")
BLENDED_FILES = ("dataset_index", "dataset_sample_index")

SplitMatrix = list[tuple[float, float] | None]


def normalize(weights: Sequence[float]) -> list[float]:
    """``w / sum(w)`` in float64, summed by numpy (the same doubles as megatron-core's ``normalize``)."""
    w = np.array(weights, dtype=np.float64)
    out: list[float] = (w / np.sum(w)).tolist()
    return out


def split_vector(split: str) -> list[float]:
    """``"969,30,1"`` -> ``[0.969, 0.03, 0.001]``: the numbers of the string, padded with zeros to three."""
    numbers = [float(x) for x in re.findall(r"[.0-9]+", split)]
    numbers += [0.0] * (len(SPLITS) - len(numbers))
    if len(numbers) != len(SPLITS) or any(x < 0 for x in numbers) or sum(numbers) <= 0:
        raise ValueError(f"split {split!r} must hold up to three non-negative numbers with a positive sum")
    return normalize(numbers)


def split_matrix(vector: Sequence[float]) -> SplitMatrix:
    """Each split's book-ends ``(lo, hi)`` on [0, 1] (the first ``lo`` is the integer 0), or None when empty."""
    ends: list[float] = [0]
    for share in vector:
        ends.append(ends[-1] + share)
    return [None if hi <= lo else (lo, hi) for lo, hi in zip(ends[:-1], ends[1:], strict=True)]


def document_range(bookends: tuple[float, float], documents: int) -> tuple[int, int]:
    """The documents ``[beg, end)`` of a split of a dataset of ``documents`` sequences."""
    lo, hi = bookends
    return int(round(lo * float(documents))), int(round(hi * float(documents)))


def samples_per_source(weights: Sequence[float], samples: Sequence[int], surplus: float = 0.0) -> list[list[int]]:
    """``[source][split]`` samples: ``ceil(ceil(samples * w) * (1 + surplus))`` for normalised weights ``w``."""
    return [[int(math.ceil(math.ceil(n * w) * (1 + surplus))) for n in samples] for w in weights]


def gpt_identifiers(
    dataset_path: str,
    num_samples: int | None,
    split: str,
    *,
    random_seed: int,
    sequence_length: int,
    split_string: str,
    matrix: SplitMatrix,
    tokenizer: dict[str, Any],
) -> dict[str, Any]:
    """A GPTDataset's unique identifiers, in megatron-core's order."""
    return {
        "class": GPT,
        "dataset_path": dataset_path,
        "num_samples": num_samples,
        "index_split": split,
        "random_seed": random_seed,
        "sequence_length": sequence_length,
        "split": split_string,
        "split_matrix": matrix,
        "tokenizer": tokenizer,
    }


def blended_identifiers(
    datasets: Sequence[dict[str, Any]], split: str, weights: Sequence[float], size: int | None
) -> dict[str, Any]:
    """A BlendedDataset's unique identifiers: its datasets' identifiers, split, weights and size."""
    return {"class": BLENDED, "datasets": list(datasets), "split": split, "weights": list(weights), "size": size}


def description(identifiers: dict[str, Any]) -> str:
    """The ``-description.txt`` text: the identifiers as JSON, indent 4."""
    return json.dumps(identifiers, indent=4)


def file_names(identifiers: dict[str, Any]) -> dict[str, str]:
    """``{"description": "<md5>-<class>-<split>-description.txt", <index>: "...-<index>.npy", ...}``."""
    cls = identifiers["class"]
    split = identifiers["index_split"] if cls == GPT else identifiers["split"]
    digest = hashlib.md5(description(identifiers).encode("utf-8"), usedforsecurity=False).hexdigest()
    base = f"{digest}-{cls}-{split}"
    names = {"description": f"{base}-description.txt"}
    for index in GPT_FILES if cls == GPT else BLENDED_FILES:
        names[index] = f"{base}-{index}.npy"
    return names
