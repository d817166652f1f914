"""Ingest + dedup here vs the BigCode / text-dedup MinHash Spark script, same corpus, P, T, K and Spark.

    python -m bench vs_bigcode --mb 200          # corpus from bench/corpus.py, cached under DATA
    python -m bench vs_bigcode --corpus /tmp/pipeline-bench/real-corpus-200mb.jsonl --mb 200
    python -m bench vs_bigcode --corpus /tmp/pipeline-bench/release-corpus-1000mb --mb 1000
    python -m bench vs_bigcode --mb 1000 --driver-memory 8g
    python -m bench vs_bigcode --mb 200 --peer-jit-as-ours   # the peer's JVM also C1 only

How it measures: docs/benchmarks.md, Method notes, vs_bigcode.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from bench.dedup_precision import sample, scan
from bench.harness import DATA, ProcessTree, child_command, child_env, corpus, write_result
from bench.vs_corpus import Corpus, load, peer_parquet, prefix
from pipeline.config.schema import SPEEDUPS
from pipeline.spark.session import LOCAL_JIT, check_java
from pipeline.spark.speedups.class_archive import archive_path, is_complete

REPO = Path(__file__).resolve().parents[1]
PEERS = REPO.parent / "shared" / "peers"
PEER_SCRIPT = "text_dedup_minhash_spark_6bb8e89.py"


def run_timed(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[float, ProcessTree]:
    """Run ``cmd`` to completion with its output in ``log``; wall seconds and peak memory, or exit on failure."""
    started = time.time()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        with ProcessTree(proc.pid) as peak:
            code = proc.wait()
    seconds = time.time() - started
    if code != 0:
        sys.exit(f"{cmd[0]} ... failed with exit {code}; see {log}")
    return seconds, peak


def ours_child(config_path: str, overrides: list[str]) -> None:
    """Ingest then dedup in this one process and one SparkSession, as ``python -m pipeline run`` would."""
    from pipeline.cli.commands import prepare
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext

    ctx = RunContext(prepare(config_path, overrides))
    for stage in ("ingest", "dedup"):
        run_stages(ctx, only=stage, log=lambda *_: None)


def main() -> None:
    if sys.argv[1:2] == ["--ours-child"]:
        return ours_child(sys.argv[2], sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--corpus",
        default="synthetic",
        help="'synthetic' (bench/corpus.py) or a JSONL file or directory of JSONL shards of real documents",
    )
    parser.add_argument(
        "--mb", type=float, default=None, help="MB of text: the synthetic size (default 200) or a real prefix (all)"
    )
    parser.add_argument("--sample", type=int, default=500, help="removed documents per side checked for precision")
    parser.add_argument("--seed", type=int, default=0, help="seed of that sample")
    parser.add_argument(
        "--precision-only",
        action="store_true",
        help="run nothing: the precision lines again from the last run's outputs (same --corpus and --mb)",
    )
    parser.add_argument(
        "--ours-only", action="store_true", help="run only our side: its time, CPU seconds and steps (no peer needed)"
    )
    parser.add_argument("--work", type=Path, default=DATA / "vs-bigcode", help="where both sides write their runs")
    parser.add_argument("--num-perm", type=int, default=256)
    parser.add_argument("--threshold", type=float, default=0.7)
    parser.add_argument("--ngram", type=int, default=5)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--shuffle-partitions", type=int, default=8)
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument(
        "--peer-jit-as-ours",
        action="store_true",
        help="run the peer's JVM with our local JIT choice too (C1 only), for a like-for-like JVM",
    )
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="override for ours: KEY=VALUE")
    args = parser.parse_args()
    if not args.ours_only and not (PEERS / PEER_SCRIPT).is_file():
        sys.exit(f"skipped: the BigCode peer script is not at {PEERS / PEER_SCRIPT} (../shared/peers/)")

    if args.corpus == "synthetic":
        raw = corpus(200 if args.mb is None else args.mb)
    else:
        raw = prefix(Path(args.corpus), args.mb, DATA / "vs-bigcode-corpora")
    docs = load(raw)
    text_mb, documents = docs.text_bytes / 1e6, len(docs.offsets)
    work = args.work
    if args.precision_only:
        precision_report(docs, work, args)
        return
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    parquet = None if args.ours_only else peer_parquet(docs, "content")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("SPARK_HOME", None)
    spark_conf = {
        "spark.sql.shuffle.partitions": str(args.shuffle_partitions),
        "spark.default.parallelism": str(args.shuffle_partitions),
        "spark.driver.memory": args.driver_memory,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }

    peer: tuple[float, int, ProcessTree] | None = None  # seconds, survivors, peak
    if not args.ours_only:
        peer_cmd = [str(Path(sys.executable).parent / "spark-submit"), "--master", args.master]
        peer_cmd += [a for k, v in spark_conf.items() for a in ("--conf", f"{k}={v}")]
        peer_cmd += ["--conf", f"spark.driver.extraJavaOptions={LOCAL_JIT}"] if args.peer_jit_as_ours else []
        peer_cmd += [PEER_SCRIPT, "--input", str(parquet), "--output", str(work / "peer-out"), "--column", "content"]
        peer_cmd += ["--threshold", str(args.threshold), "--ngram_size", str(args.ngram)]
        peer_cmd += ["--num_perm", str(args.num_perm)]
        peer_seconds, peer_peak = run_timed(peer_cmd, PEERS, env, work / "peer.log")
        # the peer partitions its output by ``__pid__``, a directory name Arrow's discovery would skip
        peer_survivors = sum(pq.ParquetFile(f).metadata.num_rows for f in (work / "peer-out").rglob("*.parquet"))
        peer = (peer_seconds, peer_survivors, peer_peak)

    config = work / "ours.yaml"
    config.write_text(
        json.dumps(
            {
                "output": str(work / "ours-run"),
                "sources": [{"name": "bench", "paths": [str(raw)], "format": "jsonl"}],
                # every speed-up on, as conf/local.yaml turns them on
                "spark": {"master": args.master, "settings": spark_conf, "speedups": list(SPEEDUPS)},
                "dedup": {"num_perm": args.num_perm, "threshold": args.threshold, "ngram": args.ngram},
                "tokenizer": {"train": True, "vocab_size": 2000},  # required by the config; not run by `dedup`
            }
        )
    )
    archive = archive_path(check_java(), spark_conf)  # what our child maps, once built
    warm = is_complete(archive)
    ours_cmd = [*child_command(__spec__), "--ours-child", str(config), *args.overrides]
    ours_env = child_env(env)
    ours_seconds, ours_peak = run_timed(ours_cmd, REPO, ours_env, work / "ours.log")
    if not warm:  # the archive builder runs after our JVM exits: let it finish before anything else runs
        deadline = time.time() + 300
        while archive.with_suffix(".lock").exists() and time.time() < deadline:
            time.sleep(1)
    report = json.loads((work / "ours-run" / "dedup" / "report.json").read_text())
    stages = json.loads((work / "ours-run" / "manifest.json").read_text())["stages"]
    ours_survivors = report["counts"]["survivors"]

    print(
        f"corpus: {text_mb:.0f} MB of text, {documents} documents; P={args.num_perm} T={args.threshold} "
        f"K={args.ngram} on {args.master}, {args.shuffle_partitions} shuffle partitions, pyspark "
        f"{__import__('pyspark').__version__}"
    )
    print(f"{'':28}{'seconds':>9}{'survivors':>11}{'py MiB':>8}{'JVM MiB':>9}{'py CPU s':>10}{'JVM CPU s':>11}")
    rows = [("ingest + dedup (here)", ours_seconds, ours_survivors, ours_peak)]
    if peer is not None:
        rows.insert(0, ("BigCode script" + (", C1 JIT" if args.peer_jit_as_ours else ""), *peer))
    for name, secs, kept, peak in rows:
        print(
            f"{name:28}{secs:9.1f}{kept!s:>11}{peak.peak['largest'] / 2**20:8.0f}{peak.peak['jvm'] / 2**20:9.0f}"
            f"{peak.cpu(False):10.1f}{peak.cpu(True):11.1f}"
        )
    ours_cpu = ours_peak.cpu(False) + ours_peak.cpu(True)
    if peer is not None:
        peer_seconds, peer_peak = peer[0], peer[2]
        print(f"speed-up: {peer_seconds / ours_seconds:.2f}x (BigCode time / ours)")
        peer_cpu = peer_peak.cpu(False) + peer_peak.cpu(True)
        print(f"CPU seconds, all processes: BigCode {peer_cpu:.1f}, ours {ours_cpu:.1f} = {peer_cpu / ours_cpu:.2f}x")
    else:
        print(f"CPU seconds, all processes: ours {ours_cpu:.1f} (--ours-only: no peer run)")
    ingest, dedup = stages["ingest"]["seconds"], stages["dedup"]["seconds"]
    print(
        f"our stages: ingest {ingest:.1f} s (with the JVM start), dedup {dedup:.1f} s = {text_mb / dedup:.1f} MB/s; "
        f"the rest of the {ours_seconds:.1f} s is the Python start and the session's shutdown"
    )
    steps = report.get("seconds") or {}
    print("our dedup seconds per step:", steps)
    if steps.get("features"):
        print(f"our features step: {text_mb / steps['features']:.1f} MB/s of text")
    print(
        "our JVM: C1 only (local master); class-data archive "
        + ("mapped (built after an earlier run)" if warm else "recorded by this run and built after it (the first)")
        + " (docs/running.md, Locally)"
    )
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    figures = {
        "ours": (ours_seconds, "s"),
        "ours CPU": (ours_cpu, "s"),
        "ours survivors": (ours_survivors, "documents"),
    }
    if steps.get("features"):
        figures["features step"] = (text_mb / steps["features"], "MB/s")
    if peer is not None:
        figures |= {
            "BigCode": (peer[0], "s"),
            "BigCode CPU": (peer_cpu, "s"),
            "BigCode survivors": (peer[1], "documents"),
        }
        figures |= {"speed-up": (peer[0] / ours_seconds, "x"), "CPU ratio": (peer_cpu / ours_cpu, "x")}
        figures |= precision_report(docs, work, args)
    figures["archive mapped"] = (float(warm), "bool")
    write_result("vs_bigcode", args, figures)


def ours_outcome(docs: Corpus, run: Path) -> tuple[set[int], dict[int, list[int]], list[list[int]]]:
    """Our removed documents (corpus indices), for each its matched partners (see the module docstring), and our
    clusters (the corpus indices of each)."""
    index = {offset: i for i, offset in enumerate(docs.offsets)}
    table = pq.read_table(run / "documents", columns=["doc_id", "position"]).to_pydict()
    doc = {d: index[p] for d, p in zip(table["doc_id"], table["position"], strict=True)}
    comps = pq.read_table(run / "dedup" / "components", columns=["doc_id", "component", "survivor"]).to_pydict()
    removed = {doc[d] for d, s in zip(comps["doc_id"], comps["survivor"], strict=True) if d != s}
    edges = pq.read_table(run / "dedup" / "edges", columns=["src", "dst", "jaccard"]).to_pydict()
    best_edge: dict[int, tuple[float, int]] = {}
    for a, b, jac in zip(edges["src"], edges["dst"], edges["jaccard"], strict=True):
        for x, y in ((doc[a], doc[b]), (doc[b], doc[a])):
            if x in removed and (x not in best_edge or (-jac, y) < (-best_edge[x][0], best_edge[x][1])):
                best_edge[x] = (jac, y)
    members: dict[int, list[int]] = defaultdict(list)
    for d, c in zip(comps["doc_id"], comps["component"], strict=True):
        members[c].append(doc[d])
    partners: dict[int, list[int]] = {}
    survivor = {doc[d]: doc[s] for d, s in zip(comps["doc_id"], comps["survivor"], strict=True)}
    for group in members.values():
        for x in group:
            if x not in removed:
                continue
            if x in best_edge:
                partners[x] = [best_edge[x][1]]
            else:  # an exact copy: a member with the same text
                same = [y for y in sorted(group) if y != x and docs.digests[y] == docs.digests[x]]
                partners[x] = same[:1]
            partners[x].append(survivor[x])
    return removed, partners, list(members.values())


def precision_report(docs: Corpus, work: Path, args: argparse.Namespace) -> dict[str, tuple[float, str]]:
    """Each side's precision on a sample of its removed documents, and the removals the sides disagree on."""
    started = time.time()
    everyone = set(range(len(docs.offsets)))
    peer_kept = {
        d for f in (work / "peer-out").rglob("*.parquet") for d in pq.read_table(f, columns=["doc"])["doc"].to_pylist()
    }
    peer_removed = everyone - peer_kept
    ours_removed, partners, clusters = ours_outcome(docs, work / "ours-run")
    ours_sample = sample(ours_removed, args.sample, args.seed)
    peer_sample = sample(peer_removed, args.sample, args.seed)
    wanted = set(ours_sample) | set(peer_sample)
    texts = {i: t for i, t in docs.texts() if i in wanted}
    best, pairs = scan(docs.texts(), texts, {i: partners[i] for i in ours_sample}, args.ngram)
    t = args.threshold

    def share(values: list[float]) -> str:
        return f"{sum(v >= t for v in values) / len(values):.3f}" if values else "n/a"

    matched = [pairs[(i, partners[i][0])] for i in ours_sample]
    with_survivor = [pairs[(i, partners[i][-1])] for i in ours_sample]
    print(
        f"precision against exact Jaccard >= {t} (K={args.ngram} word shingles, brute force; "
        f"{args.sample} removed documents per side, seed {args.seed}):"
    )
    print(f"{'':28}{'removed':>9}{'sampled':>9}{'matched pair':>14}{'best match':>12}")
    for name, removed, picked, pair in (
        ("BigCode script", peer_removed, peer_sample, "n/a"),
        ("ingest + dedup (here)", ours_removed, ours_sample, share(matched)),
    ):
        best_share = share([best[i][1] for i in picked])
        print(f"{name:28}{len(removed):9}{len(picked):9}{pair:>14}{best_share:>12}")
    print(f"ours, removed document vs its cluster's survivor: {share(with_survivor)} at >= {t}")
    precision: dict[str, tuple[float, str]] = {}
    for label, values in (("precision ours", matched), ("precision script", [best[i][1] for i in peer_sample])):
        if values:
            precision[label] = (sum(v >= t for v in values) / len(values), "fraction")
    low = sorted((best[i][1], i) for i in peer_sample if best[i][1] < t)[:3]
    if low:
        print("  lowest BigCode best matches (Jaccard, corpus line):", ", ".join(f"{j:.3f} @{i}" for j, i in low))
    print(
        f"removed by the BigCode script, kept here: {len(peer_removed - ours_removed)}; "
        f"removed here, kept by the BigCode script: {len(ours_removed - peer_removed)} "
        "(both include clusters where the sides kept a different member)"
    )
    kept_by_peer = [len(c) - len(peer_removed.intersection(c)) for c in clusters]
    in_ours = set().union(*clusters) if clusters else set()
    print(
        f"of our {len(clusters)} clusters, the BigCode script kept one member in {kept_by_peer.count(1)}, none in "
        f"{kept_by_peer.count(0)}, several in {sum(k > 1 for k in kept_by_peer)} "
        f"({sum(k - 1 for k in kept_by_peer if k > 1)} more documents than ours); it removed "
        f"{len(peer_removed - in_ours)} documents in none of our clusters "
        f"(precision pass {time.time() - started:.0f} s, untimed)"
    )
    return precision


if __name__ == "__main__":
    main()
