"""``pipeline explain RUN DOC_ID`` and ``pipeline sample RUN``: why a document was kept, removed or rejected.

Everything is read back from the run directory (tables with pyarrow, parameters from the manifest and
``dedup/report.json``); band keys are recomputed from the texts with the run's MinHash parameters.
"""

from __future__ import annotations

import itertools
import random
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from pipeline import storage
from pipeline.dedup.batches import LSH_KEYS, LshParams, doc_features
from pipeline.dedup.report_section import DOC_COLUMNS, exact_jaccard
from pipeline.dedup.shingles import count_tokens
from pipeline.errors import PipelineError, UsageError
from pipeline.run.registry import STAGES
from pipeline.sources.doc_id import doc_id as compute_doc_id
from pipeline.spans.explain_spans import document_spans, format_spans
from pipeline.stage_api import layout
from pipeline.stage_api.layout import COMPONENTS, DOCUMENTS, FILTERED, REJECTS, SURVIVORS
from pipeline.stage_api.run_tables import (
    dedup_input,
    edges_touching,
    excerpt,
    has_table,
    iter_rows,
    read_rows,
    rows_by_doc_id,
)

MEMBERS_SHOWN = 50  # cluster members whose texts are read (and listed)
EXCERPT = 300
SCORE_PREFIX = "classifier_"  # filter/documents/ columns of the fasttext_classifier filter's scores


class ExplainError(PipelineError, LookupError):
    """The document or the run asked about is not there."""


def _run_parameters(run: str) -> tuple[dict, dict]:
    """(dedup parameters from ``dedup/report.json``, the run's dedup config from ``manifest.json``)."""
    report = storage.join(run, layout.DEDUP_REPORT)
    if not storage.exists(report):
        raise ExplainError(f"{report} not found: the dedup stage has not finished in {run}")
    manifest = storage.read_json(storage.join(run, "manifest.json"))
    return storage.read_json(report).get("parameters", {}), manifest.get("config", {}).get("dedup", {})


def shared_bands(text: str, others: dict[int, str], params: dict, min_tokens: int) -> dict[int, list[int]]:
    """For each other document: the band indices whose LSH keys equal those of ``text``."""
    if any(f not in params for f in LSH_KEYS) or not params.get("bands"):
        return {}
    lsh = LshParams(**{f: params[f] for f in LSH_KEYS})
    ids = [0, *others]
    batch = pa.RecordBatch.from_pydict({"doc_id": pa.array(ids, pa.int64()), "text": [text, *others.values()]})
    keys = {r["doc_id"]: r["keys"] for out in doc_features(iter([batch]), lsh, min_tokens) for r in out.to_pylist()}
    mine = keys[0] or []
    return {i: [b for b, (k, m) in enumerate(zip(keys[i] or [], mine, strict=False)) if k == m] for i in others}


def _path_to(start: int, goal: int, links: dict[int, dict[int, str]]) -> list[tuple[int, str]]:
    """Shortest chain of links from ``start`` to ``goal``: ``[(next doc, how linked), ...]``."""
    previous: dict[int, tuple[int, str]] = {}
    queue, seen = deque([start]), {start}
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for other, how in sorted(links.get(node, {}).items()):
            if other not in seen:
                seen.add(other)
                previous[other] = (node, how)
                queue.append(other)
    if goal not in seen:
        return []
    path, node = [], goal
    while node != start:
        before, how = previous[node]
        path.append((node, how))
        node = before
    return path[::-1]


def _find_reject(run: str, doc_id: int) -> dict | None:
    """The rejected record whose (source, file, position) has this doc_id, if any."""
    if not has_table(run, REJECTS):
        return None
    for rows in iter_rows(run, REJECTS, ["source", "file", "position", "reason", "detail", "excerpt"]):
        for row in rows:
            if compute_doc_id(row["source"], row["file"], row["position"]) == doc_id:
                return row
    return None


def reservoir(batches: Iterable[list[Any]], n: int, rng: random.Random) -> list[Any]:
    """``n`` items drawn uniformly from a stream of batches in one pass, holding only ``n`` (algorithm R)."""
    picked: list[Any] = []
    seen = 0
    for batch in batches:
        for item in batch:
            seen += 1
            if len(picked) < n:
                picked.append(item)
            else:
                slot = rng.randrange(seen)
                if slot < n:
                    picked[slot] = item
    return picked


def explain(run: str, doc_id: int) -> dict[str, Any]:
    """Why ``doc_id`` was kept, removed or rejected, with the evidence (cluster, edges, bands, reason), and what
    the spans stage cut from it (``spans``: docs/spans.md, Explain and sample) when it ran."""
    info = _explain(run, doc_id)
    if info["status"] != "rejected":
        spans = document_spans(run, doc_id)
        if spans is not None:
            info["spans"] = spans
    return info


def _explain(run: str, doc_id: int) -> dict[str, Any]:
    doc = rows_by_doc_id(run, DOCUMENTS, [doc_id], DOC_COLUMNS).get(doc_id) or _listed(run, [doc_id]).get(doc_id)
    if doc is None:
        reject = _find_reject(run, doc_id)
        if reject is None:
            raise ExplainError(f"doc_id {doc_id} is neither a document nor a rejected record of {run}")
        return {
            "doc_id": doc_id,
            "status": "rejected",
            **{k: reject[k] for k in ("source", "file", "position", "reason", "detail", "excerpt")},
        }
    params, config = _run_parameters(run)
    text_of = DOCUMENTS
    if dedup_input(run) == FILTERED:  # a document the filter stage kept: its text as the filters left it
        kept = rows_by_doc_id(run, FILTERED, [doc_id], DOC_COLUMNS).get(doc_id)
        if kept is not None:
            doc, text_of = kept, FILTERED
    where = {
        "doc_id": doc_id,
        "source": doc["source"],
        "file": doc["file"],
        "position": doc["position"],
        "excerpt": excerpt(doc["text"], EXCERPT),
        "text_of": text_of,
    }
    if text_of == FILTERED:
        where.update(_classifier(run, doc_id))
    removal = _removal(run, doc_id)
    if removal is not None:
        return {**where, "status": "removed", "cluster": None, **removal}
    row = rows_by_doc_id(run, COMPONENTS, [doc_id]).get(doc_id)
    if row is None:
        tokens, min_tokens = count_tokens(doc["text"]), int(config.get("min_tokens", 0))
        why = (
            f"too short for MinHash ({tokens} tokens < min_tokens {min_tokens}) and no exact copy"
            if tokens < min_tokens
            else "no exact copy and no candidate pair at or above the threshold"
        )
        return {**where, "status": "kept", "cluster": None, "why": why}
    import pyarrow.compute as pc

    members = read_rows(run, COMPONENTS, None, pc.field("component") == row["component"])
    shown = sorted(members, key=lambda m: (m["doc_id"] not in (doc_id, row["survivor"]), m["doc_id"]))[:MEMBERS_SHOWN]
    shown_ids = [m["doc_id"] for m in shown]
    texts = {k: v["text"] for k, v in rows_by_doc_id(run, dedup_input(run), shown_ids, DOC_COLUMNS).items()}
    links: dict[int, dict[int, str]] = {}
    edges = edges_touching(run, [m["doc_id"] for m in members])
    for e in edges:
        how = "verified edge" if e["jaccard"] is None else f"verified edge, Jaccard {e['jaccard']:.3f}"
        links.setdefault(e["src"], {})[e["dst"]] = how
        links.setdefault(e["dst"], {})[e["src"]] = how
    copies = [i for i, t in texts.items() if i != doc_id and t == doc["text"]]
    for a in texts:  # identical texts are linked by the exact pre-pass, not by edges
        for b in texts:
            if a != b and texts[a] == texts[b]:
                links.setdefault(a, {})[b] = "identical text"
    mine = [e for e in edges if doc_id in (e["src"], e["dst"])]
    neighbours = {e["dst"] if e["src"] == doc_id else e["src"] for e in mine}
    others = {i: texts[i] for i in neighbours if i in texts}
    bands = shared_bands(doc["text"], others, params, int(config.get("min_tokens", 0)))
    verified = [
        {
            "doc_id": other,
            "jaccard": e["jaccard"],
            "recomputed_jaccard": round(exact_jaccard(doc["text"], texts[other], params), 6)
            if other in texts
            else None,
            "shared_bands": bands.get(other, []),
        }
        for e in mine
        for other in [e["dst"] if e["src"] == doc_id else e["src"]]
    ]
    survivor = row["survivor"]
    return {
        **where,
        "status": "kept" if survivor == doc_id else "removed",
        "cluster": row["component"],
        "cluster_size": len(members),
        "survivor": survivor,
        "survivor_rule": params.get("survivor"),
        "threshold": params.get("threshold"),
        "exact_copies": sorted(copies),
        "verified_edges": sorted(verified, key=lambda v: v["doc_id"]),
        "path_to_survivor": [{"doc_id": d, "link": how} for d, how in _path_to(doc_id, survivor, links)],
        "members": [{"doc_id": m["doc_id"], "source": m["source"]} for m in shown],
    }


def _classifier(run: str, doc_id: int) -> dict[str, Any]:
    """A kept document's fastText classifier scores (``classifier_<label>`` columns of filter/documents/), its
    ``quality_bucket`` and what it passed: the run's keep_top cut or the entries' label thresholds; {} without."""
    row = rows_by_doc_id(run, FILTERED, [doc_id]).get(doc_id) or {}
    scores = {k.removeprefix(SCORE_PREFIX): v for k, v in row.items() if k.startswith(SCORE_PREFIX) and v is not None}
    if not scores:
        return {}
    found: dict[str, Any] = {"classifier_scores": scores}
    if row.get("quality_bucket") is not None:
        found["quality_bucket"] = row["quality_bucket"]
    path = storage.join(run, *layout.parts(layout.FILTER_SUMMARY))
    summary = storage.read_json(path) if storage.exists(path) else {}
    ranking = summary.get("ranking") or {}
    if ranking.get("cut"):
        cut_score, cut_id = ranking["cut"]
        found["classifier_passed"] = (
            f"in the run's top {ranking['keep_top']} by {ranking['label']} "
            f"(cut: {ranking['label']} {cut_score:.6f}, doc_id {cut_id})"
        )
    else:
        for entries in summary.get("filters", {}).values():
            for entry in entries:
                if isinstance(entry, dict) and entry.get("name") == "fasttext_classifier" and entry.get("keep_labels"):
                    shown = ", ".join(f"{label} >= {score}" for label, score in entry["keep_labels"])
                    found["classifier_passed"] = f"keep_labels {shown}"
    return found


Drawn = tuple[int, int | None, str | None]  # a sampled doc_id, its survivor, its removal reason
# removal reason -> the table listing its documents, over the stages in run order (Stage.removal_tables)
REMOVAL_TABLES = {reason: table for stage in STAGES for reason, table in stage.removal_tables.items()}


def _removal(run: str, doc_id: int) -> dict[str, Any] | None:
    """The reason and evidence of a removal listed in its own table (Stage.removal_tables), or None."""
    for reason, table in REMOVAL_TABLES.items():
        if has_table(run, table):
            row = rows_by_doc_id(run, table, [doc_id]).get(doc_id)
            if row is not None:  # a table of several reasons (the filter stage's) names each row's
                evidence = {k: v for k, v in row.items() if k not in ("doc_id", "source", "reason", "excerpt")}
                return {"removed_as": row.get("reason") or reason, "evidence": evidence}
    return None


def _listed(run: str, doc_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Documents removed before ``documents/`` was written (ingest's older captures), from the removal tables
    that hold where they come from and an excerpt: ``{doc_id: {source, file, position, text}}``."""
    found: dict[int, dict[str, Any]] = {}
    for table in REMOVAL_TABLES.values():
        if doc_ids and has_table(run, table):
            for i, row in rows_by_doc_id(run, table, doc_ids).items():
                if "excerpt" in row and "file" in row:
                    found[i] = {**{k: row[k] for k in ("source", "file", "position")}, "text": row["excerpt"]}
    return found


def _removed_elsewhere(run: str) -> Iterator[list[Drawn]]:
    """(doc_id, None, reason) batches of every document listed in a removal table."""
    for reason, table in REMOVAL_TABLES.items():
        if has_table(run, table):
            if reason == layout.FILTER_REASONS:  # one table of many reasons: each row names its own
                for rows in iter_rows(run, table, ["doc_id", "reason"]):
                    yield [(r["doc_id"], None, r["reason"]) for r in rows]
                continue
            for rows in iter_rows(run, table, ["doc_id"]):
                yield [(r["doc_id"], None, reason) for r in rows]


def format_explanation(info: dict[str, Any]) -> str:
    """The explanation as lines a person reads."""
    head = f"doc_id {info['doc_id']} ({info['source']}, {info['file']} at {info['position']})"
    if info["status"] == "rejected":
        return "\n".join(
            [
                head,
                f"rejected by ingest: {info['reason']}" + (f" ({info['detail']})" if info["detail"] else ""),
                f"record: {info['excerpt']}",
            ]
        )
    lines = [head]
    if "removed_as" in info:
        evidence = ", ".join(f"{k} {v}" for k, v in info["evidence"].items() if v is not None)
        lines.append(f"removed as {info['removed_as']}" + (f": {evidence}" if evidence else ""))
    elif info["cluster"] is None:
        lines.append(f"kept: {info['why']}")
    else:
        rule = f"survivor rule: {info['survivor_rule']}" if info.get("survivor_rule") else ""
        lines.append(
            f"{info['status']}: in cluster {info['cluster']} of {info['cluster_size']} documents, "
            f"survivor {info['survivor']}" + (f" ({rule})" if rule else "")
        )
        if info["path_to_survivor"]:
            lines.append(
                "  path to the survivor: "
                + " -> ".join(f"{step['doc_id']} [{step['link']}]" for step in info["path_to_survivor"])
            )
        if info["exact_copies"]:
            lines.append("  identical copies: " + ", ".join(map(str, info["exact_copies"])))
        for e in info["verified_edges"]:
            jac = "n/a (verify off)" if e["jaccard"] is None else f"{e['jaccard']:.4f}"
            lines.append(
                f"  edge to {e['doc_id']}: Jaccard {jac} (threshold {info['threshold']}), "
                f"shared bands {e['shared_bands'] or 'none'}"
            )
    if info.get("classifier_scores"):
        scores = ", ".join(f"{label} {score:.6f}" for label, score in sorted(info["classifier_scores"].items()))
        passed = f"; passed: {info['classifier_passed']}" if info.get("classifier_passed") else ""
        bucket = f"; quality_bucket {info['quality_bucket']}" if info.get("quality_bucket") is not None else ""
        lines.append(f"classifier scores: {scores}{passed}{bucket}")
    filtered = " (as the filter stage wrote it)" if info.get("text_of") == FILTERED else ""
    lines.append(f"text{filtered}: {info['excerpt']}")
    if info.get("spans"):
        lines += format_spans(info["spans"])
    return "\n".join(lines)


SAMPLE_KINDS = ("removed", "kept", "rejected", "filtered")
FILTERED_COLUMNS = ["doc_id", "source", "reason", "detail", "value", "threshold", "excerpt"]


def matches_rule(reason: str, rule: str | None) -> bool:
    """Whether a filter reason is ``rule`` itself or one of its rules (``rule`` a filter's name); None: any."""
    return rule is None or reason == rule or reason.startswith(f"{rule}.")


def filter_rules(run: str) -> tuple[list[str], list[str], list[str]]:
    """From ``filter/summary.json``: the run's filters (the names its entries give), the rules that dropped a
    document, and every rule it knows of (those that dropped or measured a document)."""
    path = storage.join(run, layout.FILTER_SUMMARY)
    summary = storage.read_json(path) if storage.exists(path) else {}
    filters = {e.get("name") for entries in summary.get("filters", {}).values() for e in entries if isinstance(e, dict)}
    dropping: set[str] = set()
    for counts in summary.get("sources", {}).values():
        dropping.update(r for r, n in counts.get("dropped", {}).items() if n)
    known = dropping | set(summary.get("measures", {}))
    return sorted(f for f in filters if isinstance(f, str)), sorted(dropping), sorted(known)


def check_filter_rule(run: str, rule: str) -> None:
    """Refuse a ``--filtered`` rule that is neither a filter of the run nor one of its rules, listing the filters
    and the rules that dropped documents."""
    filters, dropping, known = filter_rules(run)
    if rule in filters or any(matches_rule(r, rule) for r in known):
        return
    grouped = []
    for name in filters:
        own = [r.split(".", 1)[1] for r in dropping if r.startswith(f"{name}.")]
        grouped.append(f"{name} ({' '.join(own)})" if own else name)
    grouped += [r for r in dropping if r.split(".", 1)[0] not in filters]
    raise UsageError(
        f"--filtered {rule!r}: no filter or rule of this run has that name; its filters (with the rules that "
        f"dropped documents, named <filter>.<rule>): {', '.join(grouped) or 'none'}"
    )


def sample_filtered(run: str, n: int, seed: int = 0, rule: str | None = None) -> list[dict[str, Any]]:
    """``n`` random documents the filter stage dropped (for ``rule``: a full reason or a filter's name), with the
    value that failed and the threshold."""
    if not has_table(run, layout.FILTER_DROPPED):
        raise ExplainError(f"{run} has no {layout.FILTER_DROPPED}/: the filter stage did not run")
    if rule is not None:
        check_filter_rule(run, rule)
    batches = iter_rows(run, layout.FILTER_DROPPED, FILTERED_COLUMNS)
    rows = ([r for r in batch if matches_rule(r["reason"], rule)] for batch in batches)
    picked = reservoir(rows, n, random.Random(seed))
    docs = rows_by_doc_id(run, DOCUMENTS, [r["doc_id"] for r in picked], DOC_COLUMNS)
    return [
        {
            "kind": "filtered",
            **{k: r[k] for k in FILTERED_COLUMNS if k != "excerpt"},
            **{k: docs[r["doc_id"]][k] for k in ("file", "position") if r["doc_id"] in docs},
            "excerpt": excerpt(r["excerpt"] or "", 160),
        }
        for r in picked
    ]


def sample(run: str, kind: str, n: int, seed: int = 0, rule: str | None = None) -> list[dict[str, Any]]:
    """``n`` random removed, kept (survivors), rejected or filtered records with where they come from."""
    if kind == "filtered":
        return sample_filtered(run, n, seed, rule)
    rng = random.Random(seed)
    if kind == "rejected":
        picked = reservoir(
            iter_rows(run, REJECTS, ["source", "file", "position", "reason", "detail", "excerpt"]), n, rng
        )
        return [
            {
                "kind": kind,
                "doc_id": compute_doc_id(r["source"], r["file"], r["position"]),
                **{k: r[k] for k in ("source", "file", "position", "reason", "detail", "excerpt")},
            }
            for r in picked
        ]
    pool: Iterable[list[Drawn]]
    if kind == "removed":  # within-run duplicates, then every removal listed in its own table
        duplicates: Iterator[list[Drawn]] = (
            [(r["doc_id"], r["survivor"], None) for r in rows if r["doc_id"] != r["survivor"]]
            for rows in iter_rows(run, COMPONENTS, ["doc_id", "survivor"])
        )
        pool = itertools.chain(duplicates, _removed_elsewhere(run))
    elif kind == "kept":
        pool = ([(r["doc_id"], None, None) for r in rows] for rows in iter_rows(run, SURVIVORS, ["doc_id"]))
    else:
        raise ValueError(f"kind {kind!r}: one of {', '.join(SAMPLE_KINDS)}")
    picked = reservoir(pool, n, rng)
    docs = rows_by_doc_id(run, DOCUMENTS, [i for i, _, _ in picked], DOC_COLUMNS)
    docs.update(_listed(run, [i for i, _, _ in picked if i not in docs]))
    return [
        {
            "kind": kind,
            "doc_id": i,
            **({"survivor": s} if s is not None else {}),
            **({"reason": why} if why is not None else {}),
            **{k: docs[i][k] for k in ("source", "file", "position")},
            "excerpt": excerpt(docs[i]["text"], 160),
        }
        for i, s, why in picked
    ]


def format_sample(row: dict[str, Any]) -> str:
    """One sampled record: kind, doc_id, source location, why, and the start of its text."""
    why = f" duplicate of {row['survivor']}" if "survivor" in row else ""
    why = f" {row['reason']}" + (f" ({row['detail']})" if row.get("detail") else "") if "reason" in row else why
    if row.get("value") is not None:
        limit = f", threshold {row['threshold']:g}" if row.get("threshold") is not None else ""
        why += f" [value {row['value']:g}{limit}]"
    text = " ".join(str(row["excerpt"]).split())
    where = f"{row['file']} at {row['position']}" if "file" in row else ""
    return f"{row['kind']:<8} {row['doc_id']:>20}  {row['source']} {where}{why}\n    {text}"
