"""End-of-run summary: a text table for the console (``report.json``/``report.html``: :mod:`pipeline.report`)."""

from __future__ import annotations

from pipeline.run.registry import STAGE_NAMES
from pipeline.run.stage import OTHER_REMOVALS


def summary_text(data: dict) -> str:
    """A few lines a person reads at the end of a run: per-stage times, per-source accounting, blend."""
    lines = ["stage             seconds"]
    stages = data.get("stages", {})
    for name in [n for n in STAGE_NAMES if n in stages]:
        lines.append(f"  {name:<16}{stages[name].get('seconds', 0):>8.1f}")
    table = data.get("accounting", {})
    if table:
        lines.append("source        read  rejected  removed  survivors  written")
        config_order = [s["name"] for s in data.get("config", {}).get("sources", [])]
        for name in [n for n in config_order if n in table] + sorted(set(table) - set(config_order)):
            row = table[name]
            lines.append(
                f"  {name:<10}{row['documents_read']:>6}{row['rejected']:>10}{row['duplicates_removed']:>9}"
                f"{row['survivors']:>11}{row['written']:>9}"
            )
        for key in OTHER_REMOVALS:
            if any(key in row for row in table.values()):
                lines.append(f"{key.replace('_', ' ')}: " + ", ".join(f"{n} {r.get(key, 0)}" for n, r in table.items()))
    left_out = data.get("stages", {}).get("merge-blend", {}).get("counts", {}).get("left_out") or []
    for entry in left_out:
        if isinstance(entry, dict):
            lines.append(f"left out of the blend: {entry['source']} (weight {entry['weight']}: {entry['why']})")
    blend = data.get("stages", {}).get("merge-blend", {}).get("counts", {}).get("blend")
    if blend:
        lines.append(f"blend ({blend['mode']}, S={blend['size']}): --data-path {blend['data_path']}")
    return "\n".join(lines)
