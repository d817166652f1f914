"""Typed, validated run configuration loaded from YAML with ``--set key=value`` overrides."""

from pipeline.config.errors import ConfigError
from pipeline.config.load import apply_overrides, load_config, load_config_text
from pipeline.config.schema import (
    BlendConfig,
    DecontaminateConfig,
    DedupConfig,
    IngestConfig,
    PipelineConfig,
    SourceConfig,
    SparkConfig,
    TokenizeConfig,
    TokenizerConfig,
    TrainingConfig,
)

__all__ = [
    "BlendConfig",
    "ConfigError",
    "DecontaminateConfig",
    "DedupConfig",
    "IngestConfig",
    "PipelineConfig",
    "SourceConfig",
    "SparkConfig",
    "TokenizeConfig",
    "TokenizerConfig",
    "TrainingConfig",
    "apply_overrides",
    "load_config",
    "load_config_text",
]
