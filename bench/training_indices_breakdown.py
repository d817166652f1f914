"""Per-step timers for bench_training_indices.py ``--breakdown``: where each side's build time goes.

Each side's step functions are wrapped (in its own child process) by a timer adding wall and CPU seconds to
the step's row; a call nested in a timed call of the same step (megatron-core's recursive document index)
counts once. ``other`` is the rest of the build: reading the ``.idx``, the plan or the builder's own work
(split sizes, descriptions and their MD5, dataset objects).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

STEPS = (
    "document index",
    "sample index",
    "shuffle index",
    "blend indices",
    ".npy writes",
    "descriptions",
    "other",
)


class Timers:
    """Wall and CPU seconds per step, filled by :meth:`wrap`ped functions."""

    def __init__(self) -> None:
        self.wall = dict.fromkeys(STEPS, 0.0)
        self.cpu = dict.fromkeys(STEPS, 0.0)
        self._active: set[str] = set()

    def wrap(self, owner: Any, name: str, step: str) -> None:
        """Replace ``owner.name`` by a timed twin counting into ``step``."""
        inner: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(inner)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if step in self._active:
                return inner(*args, **kwargs)
            self._active.add(step)
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.wall[step] += time.perf_counter() - wall
                self.cpu[step] += time.process_time() - cpu
                self._active.discard(step)

        setattr(owner, name, timed)

    def reset(self) -> None:
        """Zero every row (before the build that is reported)."""
        for step in STEPS:
            self.wall[step] = self.cpu[step] = 0.0

    def close(self, wall: float, cpu: float) -> dict[str, list[float]]:
        """``{step: [wall, cpu]}`` with ``other`` the build's time left over."""
        self.wall["other"] = wall - sum(v for k, v in self.wall.items() if k != "other")
        self.cpu["other"] = cpu - sum(v for k, v in self.cpu.items() if k != "other")
        return {step: [self.wall[step], self.cpu[step]] for step in STEPS}


def instrument(side: str) -> Timers:
    """Wrap the side's step functions (``"ours"`` or ``"megatron"``)."""
    timers = Timers()
    if side == "ours":
        from pipeline import storage
        from pipeline.training_indices import gpt_indices, tasks

        timers.wrap(gpt_indices, "document_index", "document index")
        timers.wrap(gpt_indices, "sample_index", "sample index")
        timers.wrap(gpt_indices, "shuffle_index", "shuffle index")
        timers.wrap(tasks, "build_blending_indices", "blend indices")
        timers.wrap(tasks, "write_npy", ".npy writes")
        timers.wrap(storage, "write_text", "descriptions")
    else:
        import numpy
        from megatron.core.datasets import gpt_dataset, helpers

        timers.wrap(gpt_dataset, "_build_document_index", "document index")
        timers.wrap(helpers, "build_sample_idx", "sample index")
        timers.wrap(gpt_dataset, "_build_shuffle_index", "shuffle index")
        timers.wrap(helpers, "build_blending_indices", "blend indices")
        timers.wrap(numpy, "save", ".npy writes")
    return timers


def table(rows: dict[str, dict[str, list[float]]]) -> str:
    """The medians per step of both sides, ``rows[side][step] = [wall, cpu]``, as aligned text."""
    lines = [f"{'step':<16}{'megatron wall':>14}{'ours wall':>11}{'megatron CPU':>14}{'ours CPU':>10}   (ms)"]
    for step in (*STEPS, "total"):
        m, o = rows["megatron"][step], rows["ours"][step]
        lines.append(f"{step:<16}{m[0] * 1e3:>14.1f}{o[0] * 1e3:>11.1f}{m[1] * 1e3:>14.1f}{o[1] * 1e3:>10.1f}")
    return "\n".join(lines)
