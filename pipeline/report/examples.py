"""Examples for the report: the first rejects of each source and reason (the dedup stage draws its own,
:mod:`pipeline.dedup.report_section`)."""

from __future__ import annotations

from pipeline.stage_api.layout import REJECTS
from pipeline.stage_api.run_tables import has_table, iter_rows

PER_SOURCE = 3  # examples per source and reject reason


def reject_examples(run: str, per_source: int = PER_SOURCE) -> dict[str, dict[str, list]]:
    """Per source and reject reason: the first rejected records (file, position, detail, excerpt)."""
    out: dict[str, dict[str, list]] = {}
    if not has_table(run, REJECTS):
        return out
    for rows in iter_rows(run, REJECTS, ["source", "file", "position", "reason", "detail", "excerpt"]):
        for row in rows:
            slot = out.setdefault(row["source"], {}).setdefault(row["reason"], [])
            if len(slot) < per_source:
                slot.append({k: row[k] for k in ("file", "position", "detail", "excerpt")})
    for reasons in out.values():
        for slot in reasons.values():
            slot.sort(key=lambda r: (r["file"], r["position"]))
    return {s: dict(sorted(r.items())) for s, r in sorted(out.items())}
