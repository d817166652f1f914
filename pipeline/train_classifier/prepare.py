"""The classifier's training text and arguments (docs/stages.md, The train-classifier stage), no Spark.

Text is prepared as DCLM prepares it for its fastText quality classifier (``baselines/mappers/enrichers/
quality_prediction_enrichers_calc_fasttext.py``: the stripped text's lines joined by single spaces), one
``__label__<label> <text>`` line per example, as fastText's supervised training reads them. The training options
are ``fasttext.train_supervised``'s, over the defaults of DCLM's ``baselines/train_fasttext_classifier.py``;
``thread`` is always 1 and ``seed`` the section's, so that a rerun trains the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.config import ConfigError

LABEL_PREFIX = "__label__"
# DCLM's train_fasttext_classifier.py defaults (its argparse defaults; fastText's own for the rest)
DCLM_DEFAULTS: dict[str, Any] = {"lr": 0.1, "dim": 100, "ws": 5, "epoch": 5, "minCount": 1, "wordNgrams": 1}
# train_supervised's options a config may set, with their types (input, label, thread, seed, autotune and
# pretrainedVectors are the stage's or would make training depend on time or on a file outside the run)
OPTIONS: dict[str, type] = {
    "lr": float,
    "dim": int,
    "ws": int,
    "epoch": int,
    "minCount": int,
    "minCountLabel": int,
    "minn": int,
    "maxn": int,
    "neg": int,
    "wordNgrams": int,
    "loss": str,
    "bucket": int,
    "lrUpdateRate": int,
    "t": float,
}
LOSSES = ("softmax", "ns", "hs", "ova")
FIXED = {
    "thread": "always 1 (one thread trains the same bytes on a rerun)",
    "seed": "set classifier.seed",
    "input": "the stage writes the training file",
    "label": "the labels are classifier.label and classifier.negative_label",
}


def prepared(text: str) -> str:
    """DCLM's fastText text: the lines of the stripped text joined by single spaces."""
    return " ".join(text.strip().splitlines())


def training_line(label: str, text: str) -> str:
    """One example as fastText's supervised training reads it (``label`` without ``__label__``)."""
    return f"{LABEL_PREFIX}{label} {prepared(text)}\n"


def training_args(options: Mapping[str, Any], seed: int, key: str = "classifier.fasttext") -> dict[str, Any]:
    """``train_supervised``'s keyword arguments (less ``input``): DCLM's defaults, then ``options``, one thread,
    ``seed``; a :class:`ConfigError` names ``<key>.<option>`` of an option it refuses."""
    args = dict(DCLM_DEFAULTS)
    for name, value in options.items():
        if name in FIXED:
            raise ConfigError(f"{key}.{name}", f"cannot be set: {FIXED[name]}")
        kind = OPTIONS.get(name)
        if kind is None:
            raise ConfigError(f"{key}.{name}", f"not a train_supervised option (options: {', '.join(OPTIONS)})")
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ConfigError(f"{key}.{name}", f"expected {kind.__name__}, got {value!r}")
        if kind is str and value not in LOSSES:
            raise ConfigError(f"{key}.{name}", f"expected one of {', '.join(LOSSES)}, got {value!r}")
        if isinstance(value, (int, float)) and value < 0:
            raise ConfigError(f"{key}.{name}", f"must not be negative, got {value!r}")
        args[name] = value
    for name in ("dim", "epoch", "wordNgrams"):
        if args[name] < 1:
            raise ConfigError(f"{key}.{name}", f"must be at least 1, got {args[name]!r}")
    if not args["lr"] > 0:
        raise ConfigError(f"{key}.lr", f"must be positive, got {args['lr']!r}")
    return {**args, "thread": 1, "seed": seed, "verbose": 0}


def holdout_split(n: int, holdout: float) -> int:
    """How many of ``n`` examples (in their sampled order) train, the rest held out: DCLM's
    ``int(n * (1 - valid_frac))``."""
    return int(n * (1 - holdout))
