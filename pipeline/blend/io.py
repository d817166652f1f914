"""Write and read the ``blend/`` index files: two plain ``.npy`` arrays and ``blend.json``.

Paths may be local directories or fsspec URLs (``gs://``, ``s3://``, ``memory://``); a file system is
created inside each call (fsspec objects are not fork-safe: docs/running.md, Cluster and storage).
Each file is written atomically (:func:`pipeline.storage.open_atomic`), arrays first and ``blend.json``
last, so a readable ``blend.json`` means a complete set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.blend.indices import dataset_counts, normalize_weights
from pipeline.blend.megatron_args import megatron_data_path
from pipeline.blend.schema import FORMAT, validate_blend_json

DATASET_INDEX_FILE = "dataset_index.npy"
DATASET_SAMPLE_INDEX_FILE = "dataset_sample_index.npy"
BLEND_JSON_FILE = "blend.json"


def blend_document(
    dataset_index: np.ndarray,
    *,
    sources: Sequence[str],
    prefixes: Sequence[str],
    weights: Sequence[float],
    sizes: Sequence[int] | None,
    mode: str,
    oversample: str,
    left_out: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The ``blend.json`` document for a built blend (validated before it is returned).

    ``left_out`` lists configured sources with no document to blend; the key is written only when
    there is one, so a complete blend's ``blend.json`` keeps its bytes.
    """
    n = len(sources)
    w = normalize_weights(weights)
    counts = dataset_counts(dataset_index, n)
    size = int(len(dataset_index))
    doc = {
        "format": FORMAT,
        "mode": mode,
        "oversample": oversample,
        "size": size,
        "sources": list(sources),
        "prefixes": list(prefixes),
        "sizes": None if sizes is None else [int(s) for s in sizes],
        "weights": [float(x) for x in w],
        "counts": [int(c) for c in counts],
        "achieved_ratios": [float(c / size) if size else 0.0 for c in counts],
        "dataset_index_dtype": str(np.asarray(dataset_index).dtype),
        "files": {"dataset_index": DATASET_INDEX_FILE, "dataset_sample_index": DATASET_SAMPLE_INDEX_FILE},
        "data_path": megatron_data_path([float(x) for x in w], list(prefixes)),
    }
    if left_out:
        doc["left_out"] = [dict(entry) for entry in left_out]
    validate_blend_json(doc)
    return doc


def write_blend(
    output: str,
    dataset_index: np.ndarray,
    dataset_sample_index: np.ndarray,
    *,
    sources: Sequence[str],
    prefixes: Sequence[str],
    weights: Sequence[float],
    sizes: Sequence[int] | None = None,
    mode: str = "fixed",
    oversample: str = "error",
    left_out: Sequence[dict[str, Any]] = (),
    storage_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``dataset_index.npy``, ``dataset_sample_index.npy`` and ``blend.json`` under ``output``.

    Returns the ``blend.json`` document. The ``.npy`` files hold no Python objects
    (``numpy.load(path, allow_pickle=False)`` reads them) and are byte-identical for equal arrays.
    """
    if len(dataset_index) != len(dataset_sample_index):
        raise ValueError("dataset_index and dataset_sample_index differ in length")
    doc = blend_document(
        dataset_index,
        sources=sources,
        prefixes=prefixes,
        weights=weights,
        sizes=sizes,
        mode=mode,
        oversample=oversample,
        left_out=left_out,
    )
    output, options = os.fspath(output), storage_options or {}
    fs, root = storage.resolve(output, **options)
    fs.makedirs(root, exist_ok=True)
    for name, array in ((DATASET_INDEX_FILE, dataset_index), (DATASET_SAMPLE_INDEX_FILE, dataset_sample_index)):
        with storage.open_atomic(storage.join(output, name), **options) as f:
            np.save(f, np.ascontiguousarray(array), allow_pickle=False)
    with storage.open_atomic(storage.join(output, BLEND_JSON_FILE), **options) as f:
        f.write((json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return doc


def read_blend(
    output: str, storage_options: dict[str, Any] | None = None
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Read back ``(dataset_index, dataset_sample_index, blend.json)``, validating the document."""
    fs, root = storage.resolve(output, **(storage_options or {}))
    root = root.rstrip("/")
    with fs.open(f"{root}/{BLEND_JSON_FILE}", "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    validate_blend_json(doc)
    arrays = []
    for name in (DATASET_INDEX_FILE, DATASET_SAMPLE_INDEX_FILE):
        with fs.open(f"{root}/{name}", "rb") as f:
            arrays.append(np.load(f, allow_pickle=False))
    if len(arrays[0]) != doc["size"] or len(arrays[1]) != doc["size"]:
        raise ValueError(f"{output}: index arrays do not have blend.json's size {doc['size']}")
    return arrays[0], arrays[1], doc
