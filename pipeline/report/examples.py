"""Examples for the report: near-duplicate pairs with their exact Jaccard, exact-copy groups, rejects."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pipeline.dedup.jaccard import text_jaccard
from pipeline.report.tables import (
    dedup_input,
    excerpt,
    has_table,
    iter_rows,
    read_rows,
    rows_by_doc_id,
)
from pipeline.stage_api.layout import COMPONENTS, REJECTS

PER_SOURCE = 3  # examples of each kind per source (and per reject reason)
EXCERPT_CHARS = 1500  # of each document shown side by side
CLUSTERS_PER_SOURCE = 4 * PER_SOURCE  # clusters looked at per source (some yield no near pair, only copies)
MEMBERS_LOOKED_AT = 20  # of each such cluster
DOC_COLUMNS = ["doc_id", "source", "file", "position", "text"]


def document_entry(row: dict, chars: int = EXCERPT_CHARS) -> dict[str, Any]:
    """Where a document comes from and the start of its text."""
    return {
        "doc_id": row["doc_id"],
        "source": row["source"],
        "file": row["file"],
        "position": row["position"],
        "characters": len(row["text"]),
        "excerpt": excerpt(row["text"], chars),
    }


def exact_jaccard(text_a: str, text_b: str, params: dict) -> float:
    """Exact Jaccard of two texts' shingle sets with the run's shingling (what verification computed)."""
    return text_jaccard(
        text_a, text_b, params.get("ngram", 5), params.get("shingle", "word"), params.get("max_shingles")
    )


def _clusters(run: str, sources: list[str]) -> list[tuple[int, list[dict]]]:
    """Clusters to draw examples from, largest first: ``(component, member rows, survivor first)``.

    The components table is scanned in batches only until every source has CLUSTERS_PER_SOURCE
    clusters with a removed member of that source; then only those clusters' members are read.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    chosen: dict[str, set[int]] = {s: set() for s in sources}
    for rows in iter_rows(run, COMPONENTS, ["doc_id", "source", "component", "survivor"]):
        for row in rows:
            picked = chosen.setdefault(row["source"], set())
            if row["doc_id"] != row["survivor"] and len(picked) < CLUSTERS_PER_SOURCE:
                picked.add(row["component"])
        if all(len(p) >= CLUSTERS_PER_SOURCE for p in chosen.values()):
            break
    wanted = pa.array(sorted(set().union(*chosen.values())), pa.int64())
    by_component: dict[int, list[dict]] = defaultdict(list)
    if len(wanted):
        for row in read_rows(
            run, COMPONENTS, ["doc_id", "source", "component", "survivor"], pc.field("component").isin(wanted)
        ):
            by_component[row["component"]].append(row)
    ordered = sorted(by_component.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [(c, sorted(rows, key=lambda r: (r["doc_id"] != r["survivor"], r["doc_id"]))) for c, rows in ordered]


def duplicate_examples(run: str, sources: list[str], params: dict, per_source: int = PER_SOURCE) -> dict[str, dict]:
    """Per source: ``near_duplicates`` (survivor and a removed member, their exact Jaccard) and
    ``exact_duplicates`` (groups of identical texts with their size), largest of the clusters looked at first."""
    out: dict[str, dict[str, list]] = {s: {"near_duplicates": [], "exact_duplicates": []} for s in sources}
    if not has_table(run, COMPONENTS):
        return out
    clusters = _clusters(run, sources)
    ids = {r["doc_id"] for _, rows in clusters for r in rows[:MEMBERS_LOOKED_AT]}
    texts = rows_by_doc_id(run, dedup_input(run), ids, DOC_COLUMNS)  # the texts their Jaccard is of
    for component, rows in clusters:
        survivor = texts.get(rows[0]["survivor"])
        members = [texts[r["doc_id"]] for r in rows[:MEMBERS_LOOKED_AT] if r["doc_id"] in texts]
        if survivor is None:
            continue
        size = len(rows)
        by_text: dict[str, list[dict]] = defaultdict(list)
        for member in members:
            by_text[member["text"]].append(member)
        for copies in by_text.values():
            if len(copies) < 2:
                continue
            removed = [c for c in copies if c["doc_id"] != survivor["doc_id"]]
            slot = out.setdefault(removed[0]["source"], {"near_duplicates": [], "exact_duplicates": []})
            if len(slot["exact_duplicates"]) < per_source:
                slot["exact_duplicates"].append(
                    {
                        "component": component,
                        "size": len(copies),
                        "cluster_size": size,
                        "document": document_entry(copies[0], 300),
                        "copies": [{k: c[k] for k in ("doc_id", "source", "file", "position")} for c in copies],
                    }
                )
        near = [
            (exact_jaccard(survivor["text"], m["text"], params), m)
            for m in members
            if m["doc_id"] != survivor["doc_id"] and m["text"] != survivor["text"]
        ]
        if not near:
            continue
        jaccard, member = min(near, key=lambda jm: (jm[0], jm[1]["doc_id"]))  # the most different member
        slot = out.setdefault(member["source"], {"near_duplicates": [], "exact_duplicates": []})
        if len(slot["near_duplicates"]) < per_source:
            slot["near_duplicates"].append(
                {
                    "component": component,
                    "cluster_size": size,
                    "jaccard": round(jaccard, 6),
                    "survivor": document_entry(survivor),
                    "removed": document_entry(member),
                }
            )
    return out


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
