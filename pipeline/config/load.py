"""Build a :class:`PipelineConfig` from YAML (plus ``--set`` overrides) and validate it."""

from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
from pathlib import Path
from typing import Any

import yaml

from pipeline.config.errors import ConfigError
from pipeline.config.megatron_tokenizers import megatron_identifiers
from pipeline.config.schema import PATTERN_NAMES, PipelineConfig
from pipeline.storage import read_text

YAML_BOOLEAN_HINT = "(YAML reads unquoted no/yes/on/off as a boolean: quote it)"


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> PipelineConfig:
    """Read a YAML config (local path or fsspec URL), apply ``key.sub=value`` overrides, validate."""
    return load_config_text(read_text(str(path)), overrides, origin=str(path))


def load_config_text(text: str, overrides=(), origin: str = "<config>") -> PipelineConfig:
    """Like :func:`load_config` for YAML text already in memory."""
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError("<file>", f"{origin} is not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError("<file>", f"{origin} must hold a mapping at the top level")
    raw = apply_overrides(raw, overrides)
    config = _build(PipelineConfig, raw, "")
    _check_whole(config)
    _anchor_relative_paths(config)
    _derive_training_tokenizer(config)
    return config


def _derive_training_tokenizer(config: PipelineConfig) -> None:
    """``training.tokenizer`` left out: the identifiers of megatron-core's class for ``tokenizer.kind``."""
    training, t = config.training, config.tokenizer
    if training is None or training.tokenizer is not None:
        return
    if t.kind == "bpe" or not t.path:
        raise ConfigError(
            "training.tokenizer",
            "give the training tokenizer's identifiers (derived for kinds "
            "tiktoken, huggingface and sentencepiece only)",
        )
    training.tokenizer = megatron_identifiers(t.kind, t.path)


def _anchor_relative_paths(config: PipelineConfig) -> None:
    """Make relative local paths absolute against the directory the run starts from.

    On a cluster, executors run in their own working directories (a standalone worker's
    ``work/<app>/<executor>/``, a YARN container), so a relative ``output`` would send the files that
    executors write (tokenize shards) somewhere else than the driver looks for them.
    """
    config.output = _anchored(config.output)
    config.spark.checkpoint_dir = _anchored(config.spark.checkpoint_dir)
    config.tokenizer.vocab = _anchored(config.tokenizer.vocab)
    config.tokenizer.merges = _anchored(config.tokenizer.merges)
    config.tokenizer.path = _anchored(config.tokenizer.path)
    for source in [*config.sources, *config.decontaminate.references]:
        source.paths = [_anchored(p) for p in source.paths]
    config.dedup.index = _anchored(config.dedup.index)
    if config.classifier is not None:
        for source in config.classifier.positives:
            source.paths = [_anchored(p) for p in source.paths]
        config.classifier.negatives.paths = [_anchored(p) for p in config.classifier.negatives.paths]


@typing.overload
def _anchored(path: str) -> str: ...
@typing.overload
def _anchored(path: None) -> None: ...
@typing.overload
def _anchored(path: str | None) -> str | None: ...
def _anchored(path: str | None) -> str | None:
    if path is None or "://" in path or os.path.isabs(path):
        return path
    return os.path.abspath(path)


def apply_overrides(raw: dict, overrides) -> dict:
    """Apply ``a.b.c=value`` strings; list items are addressed by index or by their ``name``."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(item, "an override must look like key.sub=value")
        key, value_text = item.split("=", 1)
        parts = _schema_parts([p for p in key.strip().split(".") if p])
        if not parts:
            raise ConfigError(key, "empty key in override")
        value = _override_value(key.strip(), value_text)
        node: Any = raw
        for i, part in enumerate(parts[:-1]):
            node = _step(node, part, ".".join(parts[: i + 1]), create=True)
        last = parts[-1]
        if isinstance(node, list):
            node[_index(node, last, ".".join(parts[:-1]))] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise ConfigError(key, "cannot set a key below a plain value")
    return raw


def _override_value(key: str, text: str) -> Any:
    """The YAML value of ``--set key=text``, refused when YAML would drop part of it as a comment (`` #...``)."""
    if not text.strip():
        return None
    try:
        tokens = [t for t in yaml.scan(text) if not isinstance(t, (yaml.StreamStartToken, yaml.StreamEndToken))]
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(key, f"--set value {text!r} is not valid YAML: {' '.join(str(exc).split())}") from None
    dropped = text[max((t.end_mark.index for t in tokens), default=0) :].strip()
    if dropped:
        raise ConfigError(
            key,
            f"--set value {text!r} would lose {dropped!r}: YAML reads ' #' as the start of a comment; "
            f"quote the value (--set '{key}=\"{text}\"')",
        )
    return value


def _schema_parts(parts: list[str]) -> list[str]:
    """Re-join the dotted tail below a free-form mapping (``spark.settings``) into one key, by the schema.

    ``spark.settings.spark.sql.shuffle.partitions`` -> ``["spark", "settings", "spark.sql.shuffle.partitions"]``.
    """
    tp: Any = PipelineConfig
    for i, part in enumerate(parts):
        tp = _unwrap_optional(tp)
        if typing.get_origin(tp) is dict:
            return parts[:i] + [".".join(parts[i:])]
        if typing.get_origin(tp) is list:
            tp = typing.get_args(tp)[0]
        elif dataclasses.is_dataclass(tp):
            tp = typing.get_type_hints(tp).get(part)
            if tp is None:  # an unknown key: the schema check names it
                return parts
        else:
            return parts
    return parts


def _unwrap_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return inner[0] if len(inner) == 1 else tp
    return tp


def _index(node: list, part: str, key: str) -> int:
    """The position of list item ``part`` (an index, or an item's ``name``) in ``node``; ``key`` names the list."""
    if part.isdigit() and int(part) < len(node):
        return int(part)
    for i, item in enumerate(node):
        if isinstance(item, dict) and item.get("name") == part:
            return i
    names = [item["name"] for item in node if isinstance(item, dict) and isinstance(item.get("name"), str)]
    held = f"holds {len(node)} item(s) (0 to {len(node) - 1})" if node else "is empty"
    named = f", named {', '.join(names)}" if names else ""
    what = f"index {part} is out of range" if part.isdigit() else f"no item is named {part!r}"
    raise ConfigError(f"{key}.{part}", f"{what}: {key} {held}{named}; --set changes items, it cannot add one")


def _step(node: Any, part: str, key: str, create: bool) -> Any:
    if isinstance(node, list):
        return node[_index(node, part, key.rsplit(".", 1)[0])]
    if isinstance(node, dict):
        if node.get(part) is None and create:
            if typing.get_origin(_unwrap_optional(_schema_type(key.split(".")))) is list:
                example = "[{name: c4}]" if part == "filter" else "[...]"
                own = key.startswith("sources.") and part == "filter"
                hint = "; without it the source uses the run's filter list (--set filter.<index>.<key>=...)"
                raise ConfigError(
                    key,
                    f"is not set, so it has no items to change: give the whole list (--set '{key}={example}')"
                    + (hint if own else ""),
                )
            node[part] = {}
        return node[part]
    raise ConfigError(key, "cannot set a key below a plain value")


def _schema_type(parts: list[str]) -> Any:
    """The schema's type at the dotted path ``parts`` (list items by index or name), or None when it has none."""
    tp: Any = PipelineConfig
    for part in parts:
        tp = _unwrap_optional(tp)
        if typing.get_origin(tp) is list:
            tp = typing.get_args(tp)[0]
        elif dataclasses.is_dataclass(tp):
            tp = typing.get_type_hints(tp).get(part)
        else:
            return None
    return tp


def _build(cls: type, data: Any, prefix: str):
    """Construct dataclass ``cls`` from a mapping, checking keys, types and field rules."""
    if not isinstance(data, dict):
        raise ConfigError(prefix or "<root>", f"expected a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in data:
        if key not in fields:
            known = ", ".join(sorted(fields))
            raise ConfigError(_join(prefix, str(key)), f"unknown key (known keys here: {known})")
    values = {}
    for name, fld in fields.items():
        key = _join(prefix, name)
        if name not in data:
            if fld.default is dataclasses.MISSING and fld.default_factory is dataclasses.MISSING:
                raise ConfigError(key, "is required")
            continue
        value = _coerce(hints[name], data[name], key)
        _check_field(fld, value, key)
        values[name] = value
    return cls(**values)


def _coerce(tp: Any, value: Any, key: str) -> Any:
    if tp is Any:  # a free-form value kept as YAML gave it (training.tokenizer's identifiers)
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) > 1:  # list[str] | dict[str, int]: the alternative of the value's shape
            inner = [a for a in inner if typing.get_origin(a) is (dict if isinstance(value, dict) else list)] or inner
        return _coerce(inner[0], value, key)
    if dataclasses.is_dataclass(tp):
        return _build(typing.cast(type, tp), value, key)
    if origin is list:
        if isinstance(value, str) and args[0] is str:
            value = [value]
        if not isinstance(value, list):
            raise ConfigError(key, f"expected a list, got {type(value).__name__}")
        return [_coerce(args[0], v, f"{key}.{i}") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(key, f"expected a mapping, got {type(value).__name__}")
        return {str(k): _coerce(args[1], v, f"{key}.{k}") for k, v in value.items()}
    if tp in (bool, int, float):
        return coerce_number(tp, value, key)
    if tp is str:
        if isinstance(value, bool):
            raise ConfigError(key, f"expected a string, got {value!r} {YAML_BOOLEAN_HINT}")
        if isinstance(value, (dict, list)) or value is None:
            raise ConfigError(key, f"expected a string, got {value!r}")
        return str(value)
    raise ConfigError(key, f"unsupported type {tp}")


def coerce_number(tp: type, value: Any, key: str) -> Any:
    """``value`` as a YAML boolean, integer or number (``tp`` bool, int or float; true is not a number)."""
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(key, f"expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(key, f"expected an integer, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(key, f"expected a number, got {value!r}")
    return float(value)


def _check_field(fld: dataclasses.Field, value: Any, key: str) -> None:
    meta = fld.metadata
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(key, f"must be one of {', '.join(meta['choices'])}; got {value!r}")
    if "pattern" in meta and not re.fullmatch(meta["pattern"], str(value)):
        raise ConfigError(
            key,
            f"{value!r} is not a valid name (a letter or digit, then letters, digits, '_', '.', "
            "'-'; no spaces or line breaks)",
        )
    if "check" in meta and not meta["check"](value):
        raise ConfigError(key, f"{meta['why']}; got {value!r}")


def _check_whole(config: PipelineConfig) -> None:
    """Rules that involve more than one field."""
    names = [s.name for s in config.sources]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"sources.{i}.name", f"duplicate source name {name!r}")
    weights = [s.weight for s in config.sources]
    if any(w is None for w in weights) and any(w is not None for w in weights):
        i = weights.index(None)
        raise ConfigError(f"sources.{i}.weight", "give a weight to every source or to none")
    d = config.dedup
    if (d.bands is None) != (d.rows is None):
        raise ConfigError("dedup.bands" if d.bands is None else "dedup.rows", "set bands and rows together")
    if d.bands is not None and d.rows is not None and d.bands * d.rows > d.num_perm:
        raise ConfigError("dedup.bands", f"bands*rows = {d.bands * d.rows} exceeds num_perm = {d.num_perm}")
    _check_references(config)
    _check_filter_entries(config)
    _check_tokenizer(config)
    if not config.output.strip():
        raise ConfigError("output", "must name a run directory")


def _check_tokenizer(config: PipelineConfig) -> None:
    """The tokenizer keys that go with its kind (docs/tokenizer.md, Kinds); files are checked at preflight."""
    t = config.tokenizer
    if t.kind == "bpe":
        if t.pattern is not None and t.pattern not in PATTERN_NAMES:
            raise ConfigError(
                "tokenizer.pattern", f"kind bpe takes a named pattern ({', '.join(PATTERN_NAMES)}), not a regex"
            )
        for key in ("path", "bos_token"):
            if getattr(t, key) is not None:
                raise ConfigError(f"tokenizer.{key}", f"is not used by kind bpe ({_KIND_OF[key]})")
        if t.add_bos:
            raise ConfigError("tokenizer.add_bos", "kind bpe has no BOS token")
        if isinstance(t.special_tokens, dict):
            raise ConfigError("tokenizer.special_tokens", "kind bpe takes a list of token texts (a mapping: tiktoken)")
        if not t.train and not (t.vocab and t.merges):
            raise ConfigError("tokenizer.vocab", "give vocab and merges files, or set tokenizer.train: true")
        if t.eod_token not in t.special_tokens:
            raise ConfigError("tokenizer.eod_token", f"{t.eod_token!r} must be one of tokenizer.special_tokens")
        return
    if t.train:
        raise ConfigError("tokenizer.train", f"trains kind bpe only; kind {t.kind} uses the file in tokenizer.path")
    for key in ("vocab", "merges"):
        if getattr(t, key) is not None:
            raise ConfigError(f"tokenizer.{key}", f"is for kind bpe; kind {t.kind} reads tokenizer.path")
    if not t.path:
        raise ConfigError("tokenizer.path", f"kind {t.kind} needs the tokenizer file")
    if t.kind != "tiktoken":
        if t.pattern is not None:
            raise ConfigError("tokenizer.pattern", f"is for kinds tiktoken and bpe; kind {t.kind} has its own")
        if isinstance(t.special_tokens, dict) or t.special_tokens != ["<|endoftext|>"]:
            raise ConfigError(
                "tokenizer.special_tokens", f"is for kinds bpe and tiktoken; kind {t.kind} has its own special tokens"
            )
    elif not isinstance(t.special_tokens, dict):
        raise ConfigError(
            "tokenizer.special_tokens",
            'kind tiktoken needs a mapping of its special tokens to ids, e.g. {"<|endoftext|>": 100257}',
        )
    if t.kind in ("tiktoken", "huggingface") and t.add_bos and not t.bos_token:
        raise ConfigError("tokenizer.bos_token", f"add_bos with kind {t.kind} needs the BOS token's text")


_KIND_OF = {
    "path": "it reads vocab and merges",
    "bos_token": "bpe has no BOS token",
}


def _check_references(config: PipelineConfig) -> None:
    """Reference (benchmark) names are unique; the dedup index is not inside the run directory."""
    names = [r.name for r in config.decontaminate.references]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"decontaminate.references.{i}.name", f"duplicate reference name {name!r}")
    index = config.dedup.index
    if index and config.output and index.rstrip("/").startswith(config.output.rstrip("/") + "/"):
        raise ConfigError(
            "dedup.index",
            "must be outside the run directory (it outlives the run and is shared by every scheduled run)",
        )
    if index and index.rstrip("/") == config.output.rstrip("/"):
        raise ConfigError("dedup.index", "must not be the run directory itself")
    if index and not config.dedup.enabled:
        raise ConfigError("dedup.index", "needs dedup.enabled: true (the index holds MinHash band keys)")


def _check_filter_entries(config: PipelineConfig) -> None:
    """Every entry of a filter list names its filter (the filter stage checks the names and their keys)."""
    lists = [("filter", config.filter)] + [(f"sources.{i}.filter", s.filter) for i, s in enumerate(config.sources)]
    for key, entries in lists:
        for i, entry in enumerate(entries or []):
            if not isinstance(entry.get("name"), str) or not entry["name"]:
                raise ConfigError(f"{key}.{i}.name", f"every filter entry names its filter; got {entry!r}")


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name
