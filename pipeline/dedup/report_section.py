"""The dedup stage's entries of report.json (docs/report_schema.md), from the run directory alone (no Spark):
its counts, cluster sizes and LSH S-curve, its steps' times, and examples of what it removed per source."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from pipeline import storage
from pipeline.dedup.bands import candidate_probability
from pipeline.dedup.jaccard import text_jaccard
from pipeline.stage_api import layout
from pipeline.stage_api.layout import COMPONENTS
from pipeline.stage_api.run_tables import dedup_input, excerpt, has_table, iter_rows, read_rows, rows_by_doc_id

Row = dict[str, Any]  # a table's row, a JSON object
PER_SOURCE = 3  # examples of each kind per source
EXCERPT_CHARS = 1500  # of each document shown side by side
CLUSTERS_PER_SOURCE = 4 * PER_SOURCE  # clusters looked at per source (some yield no near pair, only copies)
MEMBERS_LOOKED_AT = 20  # of each such cluster
DOC_COLUMNS = ["doc_id", "source", "file", "position", "text"]
S_CURVE_POINTS = 101
STEPS = ("features", "exact_prepass", "buckets", "verify", "components", "survivors")  # run order


def report_section(run: str, per_source: int = PER_SOURCE) -> dict[str, Any]:
    """report.json's ``dedup`` and ``timeline.dedup_steps``, from ``dedup/report.json`` and the run's tables."""
    path = storage.join(run, layout.DEDUP_REPORT)
    dedup = storage.read_json(path) if storage.exists(path) else {}
    counts = {k: v for k, v in dedup.get("counts", {}).items() if isinstance(v, (int, float))}
    has_documents = storage.exists(storage.join(run, layout.DOCUMENTS))
    sources = list(dedup.get("counts", {}).get("sources", {}))
    seconds = dedup.get("seconds") or {}
    order = [s for s in STEPS if s in seconds] + sorted(set(seconds) - set(STEPS))
    return {
        "dedup": {
            "counts": counts,
            "cluster_size_histogram": dedup.get("cluster_size_histogram", {}),
            "lsh": _lsh(dedup),
            "examples": duplicate_examples(run, sources, dedup.get("parameters", {}), per_source)
            if has_documents and dedup
            else {},
        },
        "timeline": {"dedup_steps": [{"step": k, "seconds": seconds[k]} for k in order]},
    }


def _lsh(dedup: Row) -> dict[str, Any] | None:
    params = dedup.get("parameters", {})
    bands, rows = params.get("bands"), params.get("rows")
    if not bands or not rows:
        return None
    xs = [i / (S_CURVE_POINTS - 1) for i in range(S_CURVE_POINTS)]
    probabilities = np.asarray(candidate_probability(np.asarray(xs), bands, rows)).tolist()
    histogram = dedup.get("counts", {}).get("candidate_jaccard_histogram") or []
    return {
        "bands": bands,
        "rows": rows,
        "num_perm": params.get("num_perm"),
        "threshold": params.get("threshold"),
        "s_curve": [{"jaccard": x, "probability": round(p, 6)} for x, p in zip(xs, probabilities, strict=True)],
        "candidate_jaccard_histogram": {"bin_width": 1 / len(histogram) if histogram else None, "counts": histogram},
    }


def document_entry(row: Row, chars: int = EXCERPT_CHARS) -> dict[str, Any]:
    """Where a document comes from and the start of its text."""
    return {
        "doc_id": row["doc_id"],
        "source": row["source"],
        "file": row["file"],
        "position": row["position"],
        "characters": len(row["text"]),
        "excerpt": excerpt(row["text"], chars),
    }


def exact_jaccard(text_a: str, text_b: str, params: Row) -> float:
    """Exact Jaccard of two texts' shingle sets with the run's shingling (what verification computed)."""
    return text_jaccard(
        text_a, text_b, params.get("ngram", 5), params.get("shingle", "word"), params.get("max_shingles")
    )


def _clusters(run: str, sources: list[str]) -> list[tuple[int, list[Row]]]:
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
    by_component: dict[int, list[Row]] = defaultdict(list)
    if len(wanted):
        for row in read_rows(
            run, COMPONENTS, ["doc_id", "source", "component", "survivor"], pc.field("component").isin(wanted)
        ):
            by_component[row["component"]].append(row)
    ordered = sorted(by_component.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [(c, sorted(rows, key=lambda r: (r["doc_id"] != r["survivor"], r["doc_id"]))) for c, rows in ordered]


def duplicate_examples(run: str, sources: list[str], params: Row, per_source: int = PER_SOURCE) -> dict[str, Row]:
    """Per source: ``near_duplicates`` (survivor and a removed member, their exact Jaccard) and
    ``exact_duplicates`` (groups of identical texts with their size), largest of the clusters looked at first."""
    out: dict[str, dict[str, list[Row]]] = {s: {"near_duplicates": [], "exact_duplicates": []} for s in sources}
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
        by_text: dict[str, list[Row]] = defaultdict(list)
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
