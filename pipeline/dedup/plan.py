"""The dedup stage's plan: every parameter resolved once from the config (bands and rows included).

The stage, its Arrow batch functions, ``dedup/report.json``, the resume check and the index commit all
read this one object; nothing after :meth:`DedupPlan.from_config` looks at the raw config again. A run
builds it once: :meth:`DedupPlan.from_config` returns the same plan for the same ``dedup`` section and
sources, however many steps of the run ask.
"""

from __future__ import annotations

from dataclasses import asdict, astuple, dataclass
from functools import lru_cache
from typing import Any

from pipeline.config.schema import DedupConfig, PipelineConfig
from pipeline.dedup.bands import optimal_bands
from pipeline.dedup.batches import LSH_KEYS, LshParams


@dataclass(frozen=True)
class DedupPlan:
    """How one run deduplicates: LSH parameters for the tasks, plus the driver-side choices."""

    enabled: bool
    lsh: LshParams  # what each task needs to turn texts into band keys (shipped to executors)
    threshold: float  # Jaccard similarity at or above which a verified pair is a duplicate
    min_tokens: int  # shorter documents get no band keys
    exact_prepass: bool
    verify: bool
    engine: str  # connected components: "star" or "graphframes"
    checkpoint_interval: int
    local_components_max_edges: int  # at most this many verified edges: union-find in one task
    local_buckets_max_rows: int  # at most this many band rows: exact groups and candidate edges in one task
    survivor: str  # "min_id", "priority" or "longest"
    priorities: dict[str, int]  # per source, for survivor "priority"
    sources: tuple[str, ...]  # configured source names, in config order
    index: str | None = None  # dedup.index: documents of earlier runs to dedup against (docs/dedup_index.md)

    @classmethod
    def from_config(cls, config: PipelineConfig) -> DedupPlan:
        """The plan of the ``dedup`` section: bands/rows as given, else datasketch's optimum for the threshold.

        Built once per distinct section and sources (what it reads of the config), then shared."""
        return _resolve(astuple(config.dedup), tuple((s.name, s.priority) for s in config.sources))

    def report_parameters(self) -> dict[str, Any]:
        """The ``parameters`` object of ``dedup/report.json``."""
        return {
            **asdict(self.lsh),
            "threshold": self.threshold,
            "verify": self.verify,
            "exact_prepass": self.exact_prepass,
            "engine": self.engine,
            "survivor": self.survivor,
        }


@lru_cache(maxsize=16)
def _resolve(dedup: tuple[Any, ...], sources: tuple[tuple[str, int], ...]) -> DedupPlan:
    """The plan of a ``dedup`` section (its field values, in order) and the (name, priority) of each source."""
    d = DedupConfig(*dedup)
    bands, rows = (d.bands, d.rows) if d.bands and d.rows else optimal_bands(d.threshold, d.num_perm)
    lsh = LshParams(**{**{key: getattr(d, key) for key in LSH_KEYS}, "bands": bands, "rows": rows})
    return DedupPlan(
        enabled=d.enabled,
        lsh=lsh,
        threshold=d.threshold,
        min_tokens=d.min_tokens,
        exact_prepass=d.exact_prepass,
        verify=d.verify,
        engine=d.engine,
        checkpoint_interval=d.checkpoint_interval,
        local_components_max_edges=d.local_components_max_edges,
        local_buckets_max_rows=d.local_buckets_max_rows,
        survivor=d.survivor,
        priorities=dict(sources),
        sources=tuple(name for name, _ in sources),
        index=d.index,
    )
