"""Helpers of the dedup-index and decontamination tests (issue #17): corpora, runs, an exact-Jaccard oracle.

The oracle restates docs/dedup.md, Shingles on its own (lower-case, split on ``\\W``, word K-grams as sets) so the
tests do not judge the pipeline with the pipeline's own shingler.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

from pipeline.config import load_config_text
from pipeline.stage_api.context import RunContext

CONFIG = """
output: {out}
spark:
  master: local[2]
sources:
  - name: web
    paths: [{paths}]
dedup:
  index: {index}
  min_tokens: 5
tokenizer:
  train: true
  vocab_size: 300
tokenize:
  partitions: 1
blend:
  oversample: wrap
"""


def random_doc(rng: random.Random, words: int = 100) -> str:
    """A text of distinct-looking words: far below any Jaccard threshold from every other such text."""
    return " ".join(f"w{rng.randrange(10**7)}" for _ in range(words))


def edit_one_word(text: str, rng: random.Random) -> str:
    """The text with one word (not the first or last) replaced: Jaccard of word 5-grams about 0.9."""
    words = text.split(" ")
    i = rng.randrange(10, len(words) - 10)
    words[i] = f"edited{rng.randrange(10**7)}"
    return " ".join(words)


def write_jsonl(path: Path, texts: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path


def config(out: Path, paths: Path | str, index: Path | str, overrides=()):
    text = CONFIG.format(out=out, paths=paths, index=index)
    return load_config_text(text, list(overrides))


def run(spark, out: Path, paths, index, overrides=(), only: str | None = None) -> tuple[RunContext, dict]:
    from pipeline.run.runner import run_stages

    ctx = RunContext(config(out, paths, index, overrides), spark=spark)
    return ctx, run_stages(ctx, only=only, log=lambda *_: None)


def tree_digests(root: Path) -> dict[str, str]:
    """sha256 of every file below ``root``."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def shingles(text: str, k: int = 5) -> frozenset[str]:
    words = re.findall(r"\w+", text.lower())
    if len(words) < k:
        return frozenset([" ".join(words)]) if words else frozenset()
    return frozenset(" ".join(words[i : i + k]) for i in range(len(words) - k + 1))


def exact_jaccard(a: str, b: str, k: int = 5) -> float:
    sa, sb = shingles(a, k), shingles(b, k)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def true_clusters(texts: dict[int, str], threshold: float, k: int = 5) -> list[set[int]]:
    """Connected components (size >= 2) of the graph 'exact Jaccard >= threshold' over every pair."""
    ids = sorted(texts)
    sets = {i: shingles(texts[i], k) for i in ids}
    parent = {i: i for i in ids}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_shingle: dict[str, list[int]] = {}
    for i in ids:
        for s in sets[i]:
            by_shingle.setdefault(s, []).append(i)
    pairs = {(a, b) for members in by_shingle.values() for x, a in enumerate(members) for b in members[x + 1 :]}
    for a, b in pairs:
        sa, sb = sets[a], sets[b]
        if len(sa & sb) / len(sa | sb) >= threshold:
            parent[find(a)] = find(b)
    groups: dict[int, set[int]] = {}
    for i in ids:
        groups.setdefault(find(i), set()).add(i)
    return [g for g in groups.values() if len(g) > 1]


def dedup_quality(clusters: list[set[int]], all_ids: set[int], kept: set[int]) -> dict[str, float]:
    """Document-level precision/recall/F1 of the removals against true clusters, and clusters wiped out.

    A removed document is right when it belongs to a true cluster; each true cluster should keep
    exactly one member: its other kept members are misses, and a cluster with none kept is wiped out.
    """
    in_cluster = set().union(*clusters) if clusters else set()
    removed = all_ids - kept
    tp = len(removed & in_cluster)
    fp = len(removed - in_cluster)
    fn = sum(max(len(c & kept) - 1, 0) for c in clusters)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "wiped_out": sum(1 for c in clusters if not c & kept)}
