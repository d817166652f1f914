"""End-of-run summary: a text table for the console, from ``manifest.json`` (``report.json``/``report.html``: the
rest of :mod:`pipeline.report`)."""

from __future__ import annotations


def _removed(row: dict) -> dict[str, int]:
    """A source's removals by reason (a manifest from before ``removed`` was recorded: its duplicates only)."""
    if "removed" in row:
        return dict(row["removed"])
    return {"duplicates_removed": row.get("duplicates_removed", 0)}


def summary_text(data: dict) -> str:
    """A few lines a person reads at the end of a run: per-stage times, per-source accounting, blend."""
    lines = ["stage             seconds"]
    stages = data.get("stages", {})
    for name, info in stages.items():  # recorded in run order
        lines.append(f"  {name:<16}{info.get('seconds', 0):>8.1f}")
    table = data.get("accounting", {})
    if table:
        lines.append("source        read  rejected  removed  survivors  written")
        config_order = [s["name"] for s in data.get("config", {}).get("sources", [])]
        for name in [n for n in config_order if n in table] + sorted(set(table) - set(config_order)):
            row = table[name]
            lines.append(
                f"  {name:<10}{row['documents_read']:>6}{row['rejected']:>10}{sum(_removed(row).values()):>9}"
                f"{row['survivors']:>11}{row['written']:>9}"
            )
        reasons = list(dict.fromkeys(k for row in table.values() for k in _removed(row)))
        if reasons != ["duplicates_removed"]:
            for reason in reasons:
                counts = ", ".join(f"{n} {_removed(r).get(reason, 0)}" for n, r in table.items())
                lines.append(f"{reason.replace('_', ' ')}: {counts}")
    for info in stages.values():
        counts = info.get("counts") or {}
        for entry in counts.get("left_out") or []:
            if isinstance(entry, dict):
                lines.append(f"left out of the blend: {entry['source']} (weight {entry['weight']}: {entry['why']})")
        blend = counts.get("blend")
        if blend:
            lines.append(f"blend ({blend['mode']}, S={blend['size']}): --data-path {blend['data_path']}")
    return "\n".join(lines)
