"""FineWeb's dedup after FineWeb's filters: datatrove 0.10.1's MinHash steps against our dedup stage, same documents.

    python -m bench recipe_dedup                  # real corpus of 100 MB (bench/real_corpus.py), cut into pieces
    python -m bench recipe_dedup --mb 5 --sample 100

How it measures: docs/benchmarks.md, Method notes, recipe_dedup.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import xxhash

from bench.dedup_precision import sample, scan
from bench.harness import DATA, REPO, write_result

EDIT_RATES = (0.01, 0.02, 0.04, 0.07, 0.1, 0.2)
KNEE = 0.72  # (1/14) ** (1/8): conf/fineweb.yaml's dedup.threshold


def pieces(corpus: Path, size: int) -> list[str]:
    """Every document of the JSONL ``corpus`` cut at line ends into pieces of about ``size`` characters."""
    out = []
    with open(corpus, encoding="utf-8") as lines:
        for line in lines:
            text, piece = json.loads(line)["text"], []
            length = 0
            for row in text.splitlines(keepends=True):
                piece.append(row)
                length += len(row)
                if length >= size:
                    out.append("".join(piece))
                    piece, length = [], 0
            if piece:
                out.append("".join(piece))
    return out


def fineweb_survivors(texts: list[str]) -> list[str]:
    """The texts conf/fineweb.yaml's filters (less url) keep, as they leave them (PII replaced)."""
    from pipeline.config import load_config
    from pipeline.filter import registry
    from pipeline.stage_api.filter import apply_filters

    entries = [dict(e) for e in load_config(REPO / "conf" / "fineweb.yaml").filter if e["name"] != "url"]
    filters = [registry.build(e) for e in entries]
    kept: list[str] = []
    for at in range(0, len(texts), 500):
        chunk = texts[at : at + 500]
        batch = pa.RecordBatch.from_pydict(
            {
                "doc_id": [str(at + i) for i in range(len(chunk))],
                "source": ["bench"] * len(chunk),
                "text": chunk,
                "meta": ["{}"] * len(chunk),
            }
        )
        kept.extend(apply_filters(batch, filters).kept.column("text").to_pylist())
    return kept


def near_copy(text: str, rate: float, rng: random.Random) -> str:
    """``text`` with each word replaced, with probability ``rate``, by another word of it (whitespace kept)."""
    words = text.split(" ")
    pool = [w for w in words if w.strip()] or ["x"]
    return " ".join(rng.choice(pool) if rng.random() < rate else w for w in words)


def build(args: argparse.Namespace, work: Path) -> Path:
    """The JSONL both sides read (``{"id", "text"}``), written under ``work``."""
    from bench.real_corpus import build as real_corpus

    texts = fineweb_survivors(pieces(real_corpus(args.mb), args.piece))
    rng = random.Random(args.seed)
    chosen = sorted(rng.sample(range(len(texts)), min(args.copies, len(texts))))
    planted = [near_copy(texts[i], EDIT_RATES[n % len(EDIT_RATES)], rng) for n, i in enumerate(chosen)]
    folder = work / "docs"
    folder.mkdir(parents=True)
    path = folder / "docs.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for i, text in enumerate(texts + planted):
            out.write(json.dumps({"id": f"d{i:06d}", "text": text}, ensure_ascii=False) + "\n")
    print(f"documents: {len(texts)} FineWeb survivors + {len(planted)} planted near copies", file=sys.stderr)
    return path


def theirs(docs: Path, work: Path) -> tuple[set[str], set[str]]:
    """The ids datatrove's four MinHash steps (FineWeb's settings) remove, and those in a duplicate cluster."""
    from datatrove.data import Document
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import (
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.utils.hashes import xxhash as datatrove_xxhash
    from datatrove.utils.hashing import HashConfig

    # datatrove 0.10.1 hands xxhash a str, which xxhash 3 encoded as UTF-8 and xxhash 4 refuses: encode it here
    datatrove_xxhash.xxhash64 = lambda data: xxhash.xxh64_intdigest(data.encode() if isinstance(data, str) else data)
    config = MinhashConfig(hash_config=HashConfig(precision=64), num_buckets=14, hashes_per_bucket=8)
    assert config.n_grams == 5

    def read() -> list[Document]:  # the documents as a list: datatrove's pipeline takes one as its first step
        rows = [json.loads(line) for line in docs.read_text(encoding="utf-8").splitlines()]
        return [Document(text=r["text"], id=r["id"]) for r in rows]

    kept: set[str] = set()

    def keep(data: Any, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        for doc in data:
            kept.add(doc.id)
            yield doc

    base, logs = work / "datatrove", work / "datatrove-logs"
    remove = base / "remove_ids"
    steps = [
        ([read(), MinhashDedupSignature(str(base / "signatures"), config=config)], 1),
        ([MinhashDedupBuckets(str(base / "signatures"), str(base / "buckets"), config=config)], 14),
        ([MinhashDedupCluster(str(base / "buckets"), str(remove), config=config, save_cluster_id=True)], 1),
        ([read(), MinhashDedupFilter(str(remove)), keep], 1),
    ]
    for n, (pipeline, tasks) in enumerate(steps):
        LocalPipelineExecutor(pipeline=pipeline, tasks=tasks, workers=1, logging_dir=str(logs / str(n))).run()
    order = [doc.id for doc in read()]
    pairs = np.frombuffer((remove / "000000.clusters").read_bytes(), dtype="<u4").reshape(-1, 2)
    return set(order) - kept, {order[i] for i in pairs[:, 0].tolist()}


def ours(docs: Path, work: Path) -> tuple[set[str], set[str]]:
    """The ids our ingest and dedup stages (conf/fineweb.yaml's dedup section, local Spark) remove, and those in a
    duplicate cluster."""
    from bench.harness import session
    from pipeline.config import load_config
    from pipeline.run.registry import stage
    from pipeline.run.runner import run_stages
    from pipeline.stage_api import layout
    from pipeline.stage_api.context import RunContext

    out = work / "ours"
    sets = [
        f"output={out}",
        f"sources=[{{name: docs, paths: [{docs}], format: jsonl, keep_fields: [id]}}]",
        "filter=[]",
        "spark.master=local[2]",
    ]
    ctx = RunContext(load_config(REPO / "conf" / "fineweb.yaml", sets), spark=session())
    run_stages(ctx, stages=(stage("ingest"), stage("dedup")), log=lambda *_: None)

    def table(name: str, columns: list[str]) -> pa.Table:
        return ds.dataset(out / name, format="parquet", exclude_invalid_files=True).to_table(columns=columns)

    documents = table(layout.DOCUMENTS, ["doc_id", "meta"])
    metas = documents.column("meta").to_pylist()
    ids = {d: json.loads(m)["id"] for d, m in zip(documents.column("doc_id").to_pylist(), metas, strict=True)}
    survivors = {ids[d] for d in table(layout.SURVIVORS, ["doc_id"]).column("doc_id").to_pylist()}
    components = table(layout.COMPONENTS, ["doc_id", "component"]).to_pylist()
    sizes: dict[int, int] = {}
    for row in components:
        sizes[row["component"]] = sizes.get(row["component"], 0) + 1
    clustered = {ids[r["doc_id"]] for r in components if sizes[r["component"]] > 1}
    return set(ids.values()) - survivors, clustered


def precision(texts: dict[str, str], removed: set[str], n: int, seed: int) -> tuple[float, float, int]:
    """Shares of ``n`` sampled removed documents whose best match has an exact Jaccard >= KNEE and >= 0.5."""
    order = sorted(texts)
    index = {doc: i for i, doc in enumerate(order)}
    picked = sample([index[d] for d in removed], n, seed)
    if not picked:
        return 0.0, 0.0, 0
    best, _ = scan(enumerate(texts[d] for d in order), {i: texts[order[i]] for i in picked}, {}, 5)
    sims = [best[i][1] for i in picked]
    return sum(s >= KNEE for s in sims) / len(sims), sum(s >= 0.5 for s in sims) / len(sims), len(sims)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=100, help="size of the real corpus (default 100 MB)")
    parser.add_argument("--piece", type=int, default=3000, help="characters per piece (default 3000)")
    parser.add_argument("--copies", type=int, default=1000, help="planted near copies (default 1000)")
    parser.add_argument("--sample", type=int, default=200, help="removed documents per side for precision")
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--work", type=Path, default=DATA / "recipe-dedup", help="where both sides write")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    docs = build(args, args.work)
    texts = {json.loads(line)["id"]: json.loads(line)["text"] for line in docs.read_text().splitlines()}
    started = time.perf_counter()
    their_removed, their_clustered = theirs(docs, args.work)
    their_s = time.perf_counter() - started
    started = time.perf_counter()
    our_removed, our_clustered = ours(docs, args.work)
    our_s = time.perf_counter() - started
    both, only_ours, only_theirs = our_removed & their_removed, our_removed - their_removed, their_removed - our_removed
    ours_knee, ours_half, n_ours = precision(texts, our_removed, args.sample, args.seed)
    theirs_knee, theirs_half, n_theirs = precision(texts, their_removed, args.sample, args.seed)
    figures = {
        "documents": (len(texts), "documents"),
        "removed_ours": (len(our_removed), "documents"),
        "removed_theirs": (len(their_removed), "documents"),
        "removed_both": (len(both), "documents"),
        "removed_only_ours": (len(only_ours), "documents"),
        "removed_only_theirs": (len(only_theirs), "documents"),
        "clustered_both": (len(our_clustered & their_clustered), "documents"),
        "clustered_only_ours": (len(our_clustered - their_clustered), "documents"),
        "clustered_only_theirs": (len(their_clustered - our_clustered), "documents"),
        "precision_ours_at_0.72": (ours_knee, "share"),
        "precision_theirs_at_0.72": (theirs_knee, "share"),
        "precision_ours_at_0.5": (ours_half, "share"),
        "precision_theirs_at_0.5": (theirs_half, "share"),
        "seconds_ours": (our_s, "s"),
        "seconds_theirs": (their_s, "s"),
    }
    print(f"documents {len(texts)}: removed ours {len(our_removed)}, theirs {len(their_removed)}")
    print(f"removed by both {len(both)}, only ours {len(only_ours)}, only theirs {len(only_theirs)}")
    in_ours, in_theirs = our_clustered, their_clustered
    print(
        f"in a duplicate cluster: both {len(in_ours & in_theirs)}, only ours {len(in_ours - in_theirs)}, "
        f"only theirs {len(in_theirs - in_ours)}"
    )
    print(f"precision ours (n={n_ours}): {ours_knee:.3f} at J>={KNEE}, {ours_half:.3f} at J>=0.5")
    print(f"precision theirs (n={n_theirs}): {theirs_knee:.3f} at J>={KNEE}, {theirs_half:.3f} at J>=0.5")
    print(f"seconds: ours {our_s:.1f} (Spark, local[2]), theirs {their_s:.1f} (local executor, 1 worker)")
    write_result("recipe_dedup", args, figures)


if __name__ == "__main__":
    main()
