"""A run directory as the filter stage leaves it, written by the test: ``manifest.json`` with the accounting,
``filter/summary.json`` and ``filter/dropped`` (Parquet via pyarrow), with values the test chooses and the facts
(histogram counts, drops per rule, examples in file order) computed here, independently of pipeline.report."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SOURCES = ("web", "code")
HOSTILE = "<script>alert('x')</script> & <img src=x> a short page"
# rule -> (threshold, direction, bin edges, whether summary.json carries under/overflow, measured per source)
MEASURES = {
    "gopher_quality.gopher_short_doc": (50.0, "min", [float(e) for e in range(0, 410, 10)], True),
    "fineweb.line_punct_ratio": (0.15, "min", [i / 20 for i in range(21)], False),
    "gopher_repetition.dup_line_frac": (0.3, "max", [i / 10 for i in range(11)], True),
}
NO_MEASURE = "language.not_listed"  # dropped documents but no histogram (a label, not a number)


@dataclass
class FilterFacts:
    """What the test wrote and what a correct report must show."""

    run: Path
    sources: tuple[str, str] = SOURCES  # a prose source and a code-like one
    drops: list[dict] = field(default_factory=list)  # filter/dropped rows in file order
    read: dict[str, int] = field(default_factory=dict)  # documents the filter got, per source
    languages: dict[str, dict[str, int]] = field(default_factory=dict)
    changed: dict[str, dict[str, int]] = field(default_factory=dict)
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # rule -> source -> measured

    def dropped(self, source: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in self.drops:
            if row["source"] == source:
                out[row["reason"]] = out.get(row["reason"], 0) + 1
        return out

    def histogram(self, rule: str, source: str) -> tuple[list[int], int, int]:
        """(counts per bin [lo, hi), below the first edge, at or above the last edge), counted one by one."""
        edges = MEASURES[rule][2]
        counts = [0] * (len(edges) - 1)
        under = over = 0
        for v in self.values[rule][source]:
            if v < edges[0]:
                under += 1
            elif v >= edges[-1]:
                over += 1
            else:
                counts[next(i for i in range(len(edges) - 1) if edges[i] <= v < edges[i + 1])] += 1
        return counts, under, over


def _texts(shared: Path) -> tuple[list[str], list[str]]:
    english = [line.strip() for line in (shared / "corpus.en").read_text().splitlines() if line.strip()]
    german = [s.strip() + "." for s in (shared / "german.txt").read_text().split(". ") if s.strip()]
    return english, german


def _drops(english: list[str], german: list[str], sources: tuple[str, str]) -> list[dict]:
    """The dropped rows (the order is the file order; examples are the first per rule and source)."""
    rows = []
    web, code = sources
    plan = [  # (source, reason, value, texts)
        (web, "gopher_quality.gopher_short_doc", 12.0, english[0]),
        (web, "gopher_quality.gopher_short_doc", 5.0, HOSTILE),  # among the examples: shown escaped
        *[(web, "gopher_quality.gopher_short_doc", float(n), english[i]) for i, n in enumerate((7, 33, 41, 3), 1)],
        *[(web, NO_MEASURE, 0.02 + 0.1 * i, german[i]) for i in range(4)],
        (web, "fineweb.line_punct_ratio", 0.05, english[10]),
        (web, "fineweb.line_punct_ratio", 0.1, "\n".join(english[11:20])),
        (code, "gopher_quality.gopher_short_doc", 9.0, "def f():\n    return 1\n"),
        (code, "gopher_repetition.dup_line_frac", 0.75, "x = 1\n" * 80),
    ]
    for doc_id, (source, reason, value, text) in enumerate(plan, start=1000):
        threshold = MEASURES[reason][0] if reason in MEASURES else 0.65
        rows.append(
            {
                "doc_id": doc_id,
                "source": source,
                "reason": reason,
                "detail": f"{value:g} against {threshold:g}",
                "value": value,
                "threshold": threshold,
                "excerpt": text[:300],
            }
        )
    return rows


def _write_dropped(run: Path, rows: list[dict]) -> None:
    schema = pa.schema(
        [("doc_id", pa.int64()), ("source", pa.string()), ("reason", pa.string()), ("detail", pa.string()),
         ("value", pa.float64()), ("threshold", pa.float64()), ("excerpt", pa.string())]
    )  # fmt: skip
    out = run / "filter" / "dropped"
    out.mkdir(parents=True)
    half = len(rows) // 2  # two part files, as Spark writes them
    pq.write_table(pa.Table.from_pylist(rows[:half], schema), out / "part-00000.parquet")
    pq.write_table(pa.Table.from_pylist(rows[half:], schema), out / "part-00001.parquet")
    (out / "_SUCCESS").write_text("")


def build_filter_run(tmp: Path, shared: Path, sources: tuple[str, str] = SOURCES) -> FilterFacts:
    """Write the filter stage's outputs under the run directory ``tmp`` and return their facts; the manifest's
    accounting gains the filter's removals (a new manifest when ``tmp`` holds none)."""
    english, german = _texts(shared)
    facts = FilterFacts(run=tmp, sources=sources)
    facts.drops = _drops(english, german, sources)
    rng = np.random.default_rng(29)
    web, code = sources
    facts.read = {web: 120, code: 30}
    facts.languages = {web: {"en": 104, "de": 4, "fr": 7, "es": 5}, code: {}}
    facts.changed = {web: {"c4": 9, "pii": 2}, code: {"c4": 0, "pii": 1}}
    measures = {}
    for rule, (threshold, direction, edges, outside) in MEASURES.items():
        facts.values[rule] = {}
        entry = {"threshold": threshold, "direction": direction, "bins": edges, "counts": {}}
        for source in sources:
            failed = [r["value"] for r in facts.drops if r["reason"] == rule and r["source"] == source]
            spread = edges[-1] - edges[0]  # a few values fall outside the edges, on both sides
            passed = rng.uniform(edges[0] - 0.1 * spread, edges[-1] + 0.1 * spread, size=25).tolist()
            values = failed + [v for v in passed if (v >= threshold if direction == "min" else v <= threshold)]
            if not outside:
                values = [v for v in values if edges[0] <= v < edges[-1]]
            facts.values[rule][source] = values
            counts, under, over = facts.histogram(rule, source)
            entry["counts"][source] = [under, *counts, over] if outside else counts
        measures[rule] = entry
    summary = {
        "filters": {
            source: [{"name": "language", "languages": ["en"], "min_score": 0.65}, {"name": "gopher_quality"}]
            for source in SOURCES
        },
        "sources": {
            s: {
                "read": facts.read[s],
                "kept": facts.read[s] - sum(facts.dropped(s).values()),
                "dropped": facts.dropped(s),
                "changed": facts.changed[s],
                "languages": facts.languages[s],
            }
            for s in sources
        },
        "measures": measures,
    }
    (tmp / "filter").mkdir(parents=True)
    (tmp / "filter" / "summary.json").write_text(json.dumps(summary))
    _write_dropped(tmp, facts.drops)
    path = tmp / "manifest.json"
    found = json.loads(path.read_text()) if path.exists() else None
    path.write_text(json.dumps(manifest(facts) if found is None else with_filter(found, facts)))
    return facts


def manifest(facts: FilterFacts) -> dict:
    """The manifest's accounting as the runner writes it: each removal reason as a key and in ``removed``."""
    accounting = {}
    for source in facts.sources:
        removed = {**facts.dropped(source), "duplicates_removed": 3}
        rejected = 2
        read = facts.read[source] + rejected
        survivors = read - rejected - sum(removed.values())
        accounting[source] = {"documents_read": read, "rejected": rejected, **removed, "removed": removed,
                              "survivors": survivors, "written": survivors}  # fmt: skip
    stages = {"filter": {"counts": {}}}  # the filter stage ran: the report asks it for its sections
    return {"config": {"sources": [{"name": s} for s in facts.sources]}, "stages": stages, "accounting": accounting}


def with_filter(found: dict, facts: FilterFacts) -> dict:
    """A real run's manifest as if a filter had dropped ``facts.drops`` before dedup (read grows by as many)."""
    for source in facts.sources:
        row = found["accounting"][source]
        dropped = facts.dropped(source)
        row["documents_read"] += sum(dropped.values())
        row["removed"] = {**dropped, **row.get("removed", {})}
        row.update(dropped)
    found.setdefault("stages", {}).setdefault("filter", {"counts": {}})
    return found
