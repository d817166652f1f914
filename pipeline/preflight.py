"""Checks that need I/O but no Spark: run before the first Spark job, failing with the key's name."""

from __future__ import annotations

from pipeline import storage
from pipeline.config import ConfigError, PipelineConfig


def check_paths(config: PipelineConfig) -> None:
    """Tokenizer files exist when given; the run directory's location is reachable."""
    tok = config.tokenizer
    if not tok.train:
        for key in ("vocab", "merges"):
            path = getattr(tok, key)
            if not _exists(path):
                raise ConfigError(f"tokenizer.{key}", f"file not found: {path!r}")
    if not storage.is_local(config.output):
        parent = config.output.rstrip("/").rsplit("/", 1)[0]
        if not _exists(parent):
            raise ConfigError("output", f"cannot reach {parent!r} (missing bucket or no permission?)")


def _exists(path: str) -> bool:
    try:
        return storage.exists(path)
    except Exception as exc:
        raise ConfigError("output", f"cannot reach {path!r}: {type(exc).__name__}: {exc}") from None
