"""Building one dataset's cache files from the merged ``.idx`` (sizes only): what a Spark task of the stage runs.

No Spark here, so the bench and the tests call the same functions in one process.
"""

from __future__ import annotations

import io
import time
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.blend.indices import OversampleError, build_blending_indices
from pipeline.errors import PipelineError
from pipeline.megatron.reader import read_index
from pipeline.training_indices import describe
from pipeline.training_indices.gpt_indices import build_gpt_indices
from pipeline.training_indices.plan import BlendTask, GptTask


def write_npy(path: str, array: np.ndarray) -> None:
    """``numpy.save`` bytes (format 1.0 header, as megatron-core saves them) written to the file atomically: the
    header numpy formats, then the array's memory as it is (no copy, no ``tofile`` round trip per file)."""
    data = np.ascontiguousarray(array)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(data))
    with storage.open_atomic(path) as f:
        f.write(header.getvalue())
        f.write(data.data.cast("B"))


def build_gpt(task: GptTask, cache_dir: str) -> dict[str, Any]:
    """Write one GPTDataset's description and three indices into ``cache_dir``; its figures."""
    started = time.time()
    _, lengths, _, _ = read_index(task.prefix)
    lengths = np.asarray(lengths, dtype=np.int32)
    documents = describe.document_range(task.bookends, int(lengths.shape[0]))
    try:
        built = build_gpt_indices(
            lengths,
            documents,
            task.num_samples,
            sequence_length=task.sequence_length,
            seed=task.seed,
            extra=task.extra,
            drop_last=task.drop_last,
        )
    except PipelineError as exc:
        split = describe.SPLITS[task.split]
        raise PipelineError(f"source {task.source!r}, {split} split (documents {documents}): {exc}") from None
    files = task.files
    storage.write_text(storage.join(cache_dir, files["description"]), describe.description(task.identifiers))
    write_npy(storage.join(cache_dir, files["document_index"]), built.document_index)
    write_npy(storage.join(cache_dir, files["sample_index"]), built.sample_index)
    write_npy(storage.join(cache_dir, files["shuffle_index"]), built.shuffle_index)
    return {
        "source": task.source,
        "split": describe.SPLITS[task.split],
        "num_samples": task.num_samples,
        "samples": int(built.sample_index.shape[0] - 1),
        "documents": documents[1] - documents[0],
        "tokens_per_epoch": built.tokens_per_epoch,
        "epochs": built.epochs,
        "separate_final_epoch": built.separate_final_epoch,
        "description": files["description"],
        "seconds": round(time.time() - started, 3),
    }


def build_blend(task: BlendTask, samples: list[int], cache_dir: str) -> dict[str, Any]:
    """Write one BlendedDataset's description and two indices; ``samples`` is each GPTDataset's length.

    A blend asking a source for more samples than its GPTDataset holds raises, as megatron-core does
    (raise ``training.mid_level_dataset_surplus``)."""
    try:
        dataset_index, dataset_sample_index = build_blending_indices(
            task.weights, task.size, sizes=samples, mode="megatron", names=task.sources, as_given=True
        )
    except OversampleError as exc:
        raise PipelineError(
            f"the {describe.SPLITS[task.split]} blend oversamples a source's GPTDataset: {str(exc).split('. ')[0]}; "
            "raise training.mid_level_dataset_surplus"
        ) from None
    files = task.files
    storage.write_text(storage.join(cache_dir, files["description"]), describe.description(task.identifiers))
    write_npy(storage.join(cache_dir, files["dataset_index"]), dataset_index)
    write_npy(storage.join(cache_dir, files["dataset_sample_index"]), dataset_sample_index)
    return {"split": describe.SPLITS[task.split], "size": task.size, "description": files["description"]}
