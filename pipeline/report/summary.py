"""End-of-run summary: a text table for the console, from ``manifest.json`` (``report.json``/``report.html``: the
rest of :mod:`pipeline.report`)."""

from __future__ import annotations

# the removal reasons a manifest recorded as plain keys before it recorded ``removed`` (read back, never written)
LEGACY_REMOVALS = ("duplicates_removed", "contaminated", "duplicates_of_earlier_runs")


def is_rule_reason(reason: str) -> bool:
    """True for a removal reason naming a rule, ``"<unit>.<rule>"`` (a filter's; a stage's own reasons have no dot)."""
    return "." in reason


def by_rule(removed: dict[str, int]) -> dict[str, int]:
    """The rule reasons of a source's removals (``{"gopher_quality.gopher_short_doc": 3, ...}``)."""
    return {reason: count for reason, count in removed.items() if is_rule_reason(reason)}


def removed_by_reason(row: dict, order: list[str] | None = None) -> dict[str, int]:
    """A source's accounting row's removals by reason, in ``order`` (the manifest's, stage by stage)."""
    if "removed" not in row:
        return {reason: row[reason] for reason in LEGACY_REMOVALS if reason in row}
    found = row["removed"]
    return {reason: found[reason] for reason in [*(order or []), *sorted(found)] if reason in found}


def stage_order(manifest: dict) -> list[str]:
    """The stages of the run in the order they ran (a manifest without ``order``: by finishing time)."""
    stages = manifest.get("stages", {})
    if "order" in manifest:
        return [n for n in manifest["order"]["stages"] if n in stages]
    return sorted(stages, key=lambda n: stages[n].get("finished") or "")


def summary_text(data: dict) -> str:
    """A few lines a person reads at the end of a run: per-stage times, per-source accounting, blend."""
    lines = ["stage             seconds"]
    stages = data.get("stages", {})
    order = data.get("order", {}).get("removed")
    for name in stage_order(data):
        info = stages[name]
        lines.append(f"  {name:<16}{info.get('seconds', 0):>8.1f}")
    table = data.get("accounting", {})
    if table:
        lines.append("source        read  rejected  removed  survivors  written")
        config_order = [s["name"] for s in data.get("config", {}).get("sources", [])]
        for name in [n for n in config_order if n in table] + sorted(set(table) - set(config_order)):
            row = table[name]
            lines.append(
                f"  {name:<10}{row['documents_read']:>6}{row['rejected']:>10}{sum(removed_by_reason(row).values()):>9}"
                f"{row['survivors']:>11}{row['written']:>9}"
            )
        reasons = list(dict.fromkeys(k for row in table.values() for k in removed_by_reason(row, order)))
        if reasons != ["duplicates_removed"]:
            names = [n for n in config_order if n in table] + sorted(set(table) - set(config_order))
            for reason in reasons:
                per_source = ", ".join(f"{n} {removed_by_reason(table[n]).get(reason, 0)}" for n in names)
                label = f"filtered {reason}" if "." in reason else reason.replace("_", " ")  # a filter's rule as named
                lines.append(f"{label}: {per_source}")
    for name in stage_order(data):
        counts = stages[name].get("counts") or {}
        for entry in counts.get("left_out") or []:
            if isinstance(entry, dict):
                lines.append(f"left out of the blend: {entry['source']} (weight {entry['weight']}: {entry['why']})")
        blend = counts.get("blend")
        if blend:
            lines.append(f"blend ({blend['mode']}, S={blend['size']}): --data-path {blend['data_path']}")
    for name, why in sorted((data.get("after_run_errors") or {}).items()):  # a refused dedup index commit
        lines.append(f"the {name} stage's last step failed after the run: {why}")
    return "\n".join(lines)
