"""Every mapInArrow of the pipeline runs its body through pipeline.spark.worker_task.per_task (CONTRIBUTING.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PIPELINE = Path(__file__).resolve().parents[2] / "pipeline"


def _map_in_arrow_calls() -> list[tuple[str, ast.Call]]:
    calls = []
    for path in sorted(PIPELINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "mapInArrow":
                calls.append((f"{path.relative_to(PIPELINE.parent)}:{node.lineno}", node))
    return calls


def test_every_map_in_arrow_body_is_wrapped_in_per_task():
    calls = _map_in_arrow_calls()
    assert len(calls) >= 9  # ingest, dedup (3), decontamination (3), train-tokenizer, tokenize, index lookup
    unwrapped = [
        where
        for where, call in calls
        if not (
            call.args
            and isinstance(call.args[0], ast.Call)
            and isinstance(call.args[0].func, ast.Name)
            and call.args[0].func.id == "per_task"
        )
    ]
    assert not unwrapped, f"mapInArrow bodies not wrapped in per_task: {unwrapped}"
