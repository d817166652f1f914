"""The run manifest (``manifest.json``) and per-stage ``_SUCCESS`` markers in the run directory."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
import sys
import time
from typing import Any

from pipeline import __version__, storage
from pipeline.config import PipelineConfig
from pipeline.secrets import redact_data, redact_settings
from pipeline.stage_api import layout


def versions() -> dict[str, str]:
    """Versions of the interpreter and the libraries that shape the outputs."""
    found = {"python": platform.python_version(), "pipeline": __version__}
    for name in ("pyspark", "numpy", "pyarrow", "regex", "xxhash"):
        module = sys.modules.get(name)
        if module is None:
            try:
                module = __import__(name)
            except ImportError:
                continue
        found[name] = getattr(module, "__version__", "unknown")
    return found


def config_dict(config: PipelineConfig) -> dict[str, Any]:
    """The config as plain data (what the manifest records): secret settings and URL passwords redacted."""
    data = redact_data(dataclasses.asdict(config))
    data["spark"]["settings"] = redact_settings(config.spark.settings or {})
    return data


def fingerprint(parts: dict[str, Any]) -> str:
    """A stable digest of config sections."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class Manifest:
    """Reads and updates ``<run>/manifest.json``; one writer (the driver)."""

    def __init__(self, run_dir: str) -> None:
        self.path = storage.join(run_dir, layout.MANIFEST)
        self.run_dir = run_dir
        self.data: dict[str, Any] = storage.read_json(self.path) if storage.exists(self.path) else {}
        self.data.setdefault("stages", {})

    def start(self, config: PipelineConfig) -> None:
        """Record the config and versions of this invocation."""
        self.data["config"] = config_dict(config)
        self.data["versions"] = versions()
        self.data["updated"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.save()

    def record_stage(self, stage: str, info: dict[str, Any]) -> None:
        """Store a finished stage's counts, timing and fingerprint."""
        self.data["stages"][stage] = info
        self.data["updated"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.save()

    def save(self) -> None:
        storage.write_json(self.path, self.data)


def marker_path(run_dir: str, stage: str) -> str:
    """Where a finished stage leaves its ``_SUCCESS`` marker."""
    return storage.join(run_dir, layout.marker(stage))
