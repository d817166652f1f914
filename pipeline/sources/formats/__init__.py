"""The input formats by name. A new format is one module defining its ``FORMAT``
(:class:`~pipeline.sources.formats.base.Format`) and one line here."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.config import ConfigError, SourceConfig
from pipeline.sources.formats.base import Format
from pipeline.sources.formats.jsonl import FORMAT as JSONL
from pipeline.sources.formats.parquet import FORMAT as PARQUET
from pipeline.sources.formats.text import FORMAT as TEXT
from pipeline.sources.formats.warc import FORMAT as WARC
from pipeline.sources.formats.wet import FORMAT as WET

FORMATS: dict[str, Format] = {f.name: f for f in (JSONL, PARQUET, TEXT, WARC, WET)}


def check_formats(sources: Sequence[SourceConfig], key: str) -> None:
    """Every source names a known format; else a :class:`ConfigError` naming ``<key>.<i>.format``."""
    for i, src in enumerate(sources):
        if src.format not in FORMATS:
            raise ConfigError(f"{key}.{i}.format", f"must be one of {', '.join(FORMATS)}; got {src.format!r}")
