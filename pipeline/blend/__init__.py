"""Blending (docs/blending.md): Megatron's BlendedDataset indices, exact and fast, plus their files.

Pure numpy (optionally compiled with numba); no Spark, torch or Megatron import here.
"""

from pipeline.blend.indices import (
    OversampleError,
    achieved_ratios,
    build_blending_indices,
    dataset_counts,
    index_dtype,
    normalize_weights,
)
from pipeline.blend.io import blend_document, read_blend, write_blend
from pipeline.blend.megatron_args import megatron_data_path, parse_blend
from pipeline.blend.schema import BLEND_JSON_SCHEMA, blend_json_errors, validate_blend_json

__all__ = [
    "BLEND_JSON_SCHEMA",
    "OversampleError",
    "achieved_ratios",
    "blend_document",
    "blend_json_errors",
    "build_blending_indices",
    "dataset_counts",
    "index_dtype",
    "megatron_data_path",
    "normalize_weights",
    "parse_blend",
    "read_blend",
    "validate_blend_json",
    "write_blend",
]
