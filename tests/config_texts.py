"""The smallest valid config text for config tests: one JSONL file behind one or more named sources."""

from __future__ import annotations

from pathlib import Path


def write_jsonl(tmp_path: Path) -> Path:
    """A one-document JSONL file under ``tmp_path``."""
    data = tmp_path / "a.jsonl"
    data.write_text('{"text": "hello world"}\n')
    return data


def config_text(path: Path | str, output: str = "/tmp/run", sources: dict[str, str] | None = None) -> str:
    """YAML with ``output``, one source per ``sources`` entry (name -> extra ``key: value`` line, or "")
    reading ``path``, and a tokenizer trained on the run (default: one source ``web``)."""
    lines = [f"output: {output}", "sources:"]
    for name, extra in (sources or {"web": ""}).items():
        lines += [f"  - name: {name}", f"    paths: [{path}]", *([f"    {extra}"] if extra else [])]
    return "\n".join([*lines, "tokenizer:", "  train: true", ""])
