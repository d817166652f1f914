"""The documented schema of ``blend/blend.json`` and a small hand-written validator for it.

``BLEND_JSON_SCHEMA`` is written in JSON-Schema vocabulary (draft 2020-12 subset: ``type``,
``enum``, ``const``, ``minimum``, ``maximum``, ``items``, ``required``, ``properties``,
``additionalProperties``) so it can be published or fed to any JSON-Schema tool; the validator below
implements exactly that subset plus the cross-field rules a schema cannot express (one entry per
source in every list, counts summing to ``size``, ratios = counts / size, weights summing to 1).
"""

from __future__ import annotations

import math
from typing import Any

FORMAT = "spark-pretrain-pipeline/blend/1"

_STR_LIST = {"type": "array", "items": {"type": "string", "minLength": 1}}
_NUM_LIST = {"type": "array", "items": {"type": "number", "minimum": 0}}
_INT_LIST = {"type": "array", "items": {"type": "integer", "minimum": 0}}

BLEND_JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "blend.json: how the blended training stream draws from each source",
    "type": "object",
    "required": [
        "format",
        "mode",
        "oversample",
        "size",
        "sources",
        "prefixes",
        "sizes",
        "weights",
        "counts",
        "achieved_ratios",
        "dataset_index_dtype",
        "files",
        "data_path",
    ],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT, "description": "schema identifier and version"},
        "mode": {"enum": ["fixed", "megatron"], "description": "index algorithm (docs/blending.md, The rule)"},
        "oversample": {"enum": ["error", "wrap"], "description": "policy when demand > size"},
        "size": {"type": "integer", "minimum": 0, "description": "S, the blend length in samples"},
        "sources": {**_STR_LIST, "description": "source names, in dataset-index order"},
        "prefixes": {**_STR_LIST, "description": "IndexedDataset prefix of each source"},
        "sizes": {
            "type": ["array", "null"],
            "items": {"type": "integer", "minimum": 0},
            "description": "samples available per source, or null when not checked",
        },
        "weights": {**_NUM_LIST, "description": "normalised weights (sum 1)"},
        "counts": {**_INT_LIST, "description": "samples each source contributes (sum S)"},
        "achieved_ratios": {**_NUM_LIST, "description": "counts / S"},
        "dataset_index_dtype": {"enum": ["uint8", "int16", "int32"]},
        "files": {
            "type": "object",
            "required": ["dataset_index", "dataset_sample_index"],
            "additionalProperties": False,
            "properties": {
                "dataset_index": {"const": "dataset_index.npy"},
                "dataset_sample_index": {"const": "dataset_sample_index.npy"},
            },
        },
        "data_path": {
            "type": "string",
            "minLength": 1,
            "description": "Megatron --data-path value: 'w1 prefix1 w2 prefix2 ...'",
        },
        "left_out": {
            "type": "array",
            "description": "present only when a configured source had no document left to blend",
            "items": {
                "type": "object",
                "required": ["source", "weight", "why"],
                "additionalProperties": False,
                "properties": {
                    "source": {"type": "string"},
                    "weight": {"type": ["number", "null"]},
                    "why": {"type": "string"},
                },
            },
        },
    },
}

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
    "null": lambda v: v is None,
}


def _check(value: Any, schema: dict[str, Any], where: str, errors: list[str]) -> None:
    """Validate ``value`` against the schema subset, appending messages to ``errors``."""
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_TYPES[t](value) for t in types):
            errors.append(f"{where}: expected {' or '.join(types)}, got {type(value).__name__} {value!r:.60}")
            return
    if "const" in schema and value != schema["const"]:
        errors.append(f"{where}: must be {schema['const']!r}, got {value!r:.60}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: must be one of {schema['enum']}, got {value!r:.60}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        errors.append(f"{where}: must be >= {schema['minimum']}, got {value!r}")
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        errors.append(f"{where}: must not be empty")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check(item, schema["items"], f"{where}[{i}]", errors)
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{where}: missing required key {key!r}")
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                _check(item, props[key], f"{where}.{key}", errors)
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}: unexpected key {key!r}")


def _cross_field(doc: dict[str, Any], errors: list[str]) -> None:
    n = len(doc["sources"])
    if n == 0:
        errors.append("$.sources: must name at least one source")
    if len(set(doc["sources"])) != n:
        errors.append("$.sources: names must be unique")
    for key in ("prefixes", "weights", "counts", "achieved_ratios") + (("sizes",) if doc["sizes"] is not None else ()):
        if len(doc[key]) != n:
            errors.append(f"$.{key}: has {len(doc[key])} entries for {n} sources")
    if errors:
        return
    size = doc["size"]
    if n and abs(sum(doc["weights"]) - 1.0) > 1e-9:
        errors.append(f"$.weights: must sum to 1, sum is {sum(doc['weights'])!r}")
    if sum(doc["counts"]) != size:
        errors.append(f"$.counts: sum {sum(doc['counts'])} != size {size}")
    for i, (c, r) in enumerate(zip(doc["counts"], doc["achieved_ratios"], strict=True)):
        if abs(r - (c / size if size else 0.0)) > 1e-12:
            errors.append(f"$.achieved_ratios[{i}]: {r!r} != counts / size")
    if doc["sizes"] is not None and doc["oversample"] == "error":
        for i, (c, s) in enumerate(zip(doc["counts"], doc["sizes"], strict=True)):
            if c > s:
                errors.append(f"$.counts[{i}]: {c} samples from a source of size {s} with oversample='error'")
    if doc["mode"] == "megatron" and doc["dataset_index_dtype"] != "int16":
        errors.append("$.dataset_index_dtype: mode 'megatron' writes int16")


def blend_json_errors(obj: Any) -> list[str]:
    """Every problem found in a ``blend.json`` document (empty list when it is valid)."""
    errors: list[str] = []
    _check(obj, BLEND_JSON_SCHEMA, "$", errors)
    if not errors:
        _cross_field(obj, errors)
    return errors


def validate_blend_json(obj: Any) -> None:
    """Raise ``ValueError`` listing every problem if ``obj`` is not a valid ``blend.json`` document."""
    errors = blend_json_errors(obj)
    if errors:
        raise ValueError("invalid blend.json:\n  " + "\n  ".join(errors))
