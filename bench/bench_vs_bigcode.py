"""Ingest + dedup here vs the BigCode / text-dedup MinHash Spark script, same corpus, P, T, K and Spark.

    python -m bench vs_bigcode --mb 200          # corpus from corpora/synthetic.py, cached under DATA
    python -m bench vs_bigcode --corpus /tmp/pipeline-bench/release-corpus-1000mb --mb 1000
    python -m bench vs_bigcode --mb 200 --ours-only
    python -m bench vs_bigcode --corpus /tmp/pipeline-bench/mixed-corpus-200mb --mb 200 --as-user --cold

How it measures: docs/benchmarks.md, Method notes, vs_bigcode.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

from bench.dedup_precision import sample, scan
from bench.harness import (
    DATA,
    REPO,
    arguments,
    child_env,
    cold_caches,
    load_line,
    run_logged,
    wait_for_archive,
    write_result,
)
from bench.vs_corpus import Corpus, load, peer_parquet, prefix
from corpora import synthetic
from corpora.store import FIXTURES
from pipeline.config.schema import SPEEDUPS
from pipeline.spark.session import check_java
from pipeline.spark.speedups.class_archive import archive_path, is_complete

PEERS = FIXTURES.parent / "peers"
HELP_AS_USER = "our side as a user runs it: `python -m pipeline ingest`, then `python -m pipeline dedup` (a JVM each)"
HELP_COLD = "our side starts with an empty numba cache and no JVM class-data archive (bench/readme_table.py's)"
PEER_SCRIPT = "text_dedup_minhash_spark_6bb8e89.py"
STAGES = ("ingest", "dedup")
NUM_PERM, THRESHOLD, NGRAM, MASTER, PARTITIONS, SEED = 256, 0.7, 5, "local[2]", 8, 0
SPARK_CONF = {
    "spark.sql.shuffle.partitions": str(PARTITIONS),
    "spark.default.parallelism": str(PARTITIONS),
    "spark.driver.memory": "8g",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}


def ours_child(config_path: str) -> None:
    """Ingest then dedup in this one process and one SparkSession, as ``python -m pipeline run`` would."""
    from pipeline.cli.commands import prepare
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext

    ctx = RunContext(prepare(config_path, []))
    for stage in STAGES:
        run_stages(ctx, only=stage, log=lambda *_: None)


def run_peer(parquet: Path, work: Path, env: dict[str, str]) -> tuple[float, int, float]:
    """The BigCode script over ``parquet``: its seconds, survivors and CPU seconds."""
    cmd = [str(Path(sys.executable).parent / "spark-submit"), "--master", MASTER]
    cmd += [a for k, v in SPARK_CONF.items() for a in ("--conf", f"{k}={v}")]
    cmd += [PEER_SCRIPT, "--input", str(parquet), "--output", str(work / "peer-out"), "--column", "content"]
    cmd += ["--threshold", str(THRESHOLD), "--ngram_size", str(NGRAM), "--num_perm", str(NUM_PERM)]
    run, tree = run_logged(cmd, work / "peer.log", env, cwd=PEERS)
    seconds = run["wall_s"]
    # the peer partitions its output by ``__pid__``, a directory name Arrow's discovery would skip
    survivors = sum(pq.ParquetFile(f).metadata.num_rows for f in (work / "peer-out").rglob("*.parquet"))
    print(f"{'BigCode script':28}{seconds:9.1f}{survivors!s:>11}{tree.cpu():10.1f}")
    return seconds, survivors, tree.cpu()


def our_commands(config: Path, as_user: bool) -> dict[str, list[str]]:
    """Our side's commands by name: ``python -m pipeline ingest`` then ``dedup`` (``as_user``), else one child."""
    if as_user:
        return {stage: [sys.executable, "-m", "pipeline", stage, "--config", str(config)] for stage in STAGES}
    return {"ours": [sys.executable, "-m", "bench.bench_vs_bigcode", "--ours-child", str(config)]}


def measure_ours(
    config: Path, work: Path, env: dict[str, str], as_user: bool, cold: Path | None
) -> tuple[bool, float, float]:
    """Our side, with empty caches under ``cold`` when given: ``python -m pipeline ingest`` then ``python -m pipeline
    dedup`` (``as_user``: two processes, a JVM each, each printed), else one child running both stages in one
    SparkSession. Whether the class-data archive was there to map, the seconds and the CPU seconds, summed."""
    ours_env = child_env({**env, **(cold_caches(cold) if cold else {})})
    cache = Path(ours_env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    archive = cache / "spark-pretrain-pipeline" / "jvm" / archive_path(check_java(), SPARK_CONF).name  # ours maps
    warm = is_complete(archive)
    seconds = cpu = 0.0
    for name, cmd in our_commands(config, as_user).items():
        run, tree = run_logged(cmd, work / f"{name}.log", ours_env)
        seconds, cpu = seconds + run["wall_s"], cpu + tree.cpu()
        if as_user:
            print(f"{'  python -m pipeline ' + name:28}{run['wall_s']:9.1f}{'':>11}{tree.cpu():10.1f}")
    if not warm:  # the archive builder runs after our JVM exits: let it finish before anything else runs
        wait_for_archive(cache, 300, archive.stem.removeprefix("classes-"))
    return warm, seconds, cpu


def keep_cold_kernels(cold_numba: Path) -> int:
    """Copy the numba kernels a cold run compiled for this checkout's sources to where a run with the caches
    as found looks for them (``NUMBA_CACHE_DIR``, else each package directory's ``__pycache__``), so that the
    next run without ``--cold`` is steady; the number of kernel files copied."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    copied = 0
    for package in (REPO / "pipeline").rglob("__init__.py"):
        src = str(package.parent)  # numba names a cache directory after its sources' directory and a hash of its path
        name = f"{package.parent.name}_{hashlib.sha1(src.encode()).hexdigest()}"
        if not (cold_numba / name).is_dir():
            continue
        target = Path(given) / name if given else package.parent / "__pycache__"
        target.mkdir(parents=True, exist_ok=True)
        for item in (cold_numba / name).glob("*.nb[ic]"):
            shutil.copy2(item, target / item.name)
            copied += 1
    return copied


def main() -> None:
    if sys.argv[1:2] == ["--ours-child"]:
        return ours_child(sys.argv[2])
    parser = arguments(__doc__, corpus="synthetic", work=DATA / "vs-bigcode", sample=500, ours_only=False)
    for flag, shown in (("--as-user", HELP_AS_USER), ("--cold", HELP_COLD)):
        parser.add_argument(flag, action="store_true", help=shown)
    parser.add_argument("--mb", type=float, default=None, help="MB of text: synthetic (default 200) or a real prefix")
    args = parser.parse_args()
    if not args.ours_only and not (PEERS / PEER_SCRIPT).is_file():
        sys.exit(f"skipped: the BigCode peer script is not at {PEERS / PEER_SCRIPT} (../shared/peers/)")
    mine = args.corpus == "synthetic"
    raw = synthetic.build(args.mb or 200) if mine else prefix(Path(args.corpus), args.mb, DATA / "vs-bigcode-corpora")
    docs, work = load(raw), args.work
    text_mb = docs.text_bytes / 1e6
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    env.pop("SPARK_HOME", None)
    print(
        f"corpus: {text_mb:.0f} MB of text, {len(docs.offsets)} documents; P={NUM_PERM} T={THRESHOLD} K={NGRAM} on "
        f"{MASTER}, {PARTITIONS} shuffle partitions, pyspark {__import__('pyspark').__version__}"
    )
    print(f"{'':28}{'seconds':>9}{'survivors':>11}{'CPU s':>10}")
    peer = None if args.ours_only else run_peer(peer_parquet(docs, "content"), work, env)
    config = work / "ours.yaml"
    ours = {"output": str(work / "ours-run"), "sources": [{"name": "bench", "paths": [str(raw)], "format": "jsonl"}]}
    ours["spark"] = {"master": MASTER, "settings": SPARK_CONF, "speedups": list(SPEEDUPS)}  # as conf/local.yaml
    ours["dedup"] = {"num_perm": NUM_PERM, "threshold": THRESHOLD, "ngram": NGRAM}
    ours["tokenizer"] = {"train": True, "vocab_size": 2000}  # required by the config; not run by `dedup`
    config.write_text(json.dumps(ours))
    with tempfile.TemporaryDirectory(prefix="vs-bigcode-cold-", dir=work) as scratch:
        warm, seconds, cpu = measure_ours(config, work, env, args.as_user, Path(scratch) if args.cold else None)
        if args.cold:  # else the next run without --cold compiles them again (as a second cold run)
            kept = keep_cold_kernels(Path(scratch) / "numba")
            print(f"kept the cold run's numba kernels for the next run: {kept} files")
    report = json.loads((work / "ours-run" / "dedup" / "report.json").read_text())
    survivors = report["counts"]["survivors"]
    print(f"{'ingest + dedup (here)':28}{seconds:9.1f}{survivors!s:>11}{cpu:10.1f}")
    figures = {"ours": (seconds, "s"), "ours CPU": (cpu, "s"), "ours survivors": (survivors, "documents")}
    if peer is not None:
        print(f"speed-up: {peer[0] / seconds:.2f}x (BigCode time / ours)")
        print(f"CPU seconds, all processes: BigCode {peer[2]:.1f}, ours {cpu:.1f} = {peer[2] / cpu:.2f}x")
        figures |= {
            "BigCode": (peer[0], "s"),
            "BigCode CPU": (peer[2], "s"),
            "BigCode survivors": (peer[1], "documents"),
        }
        figures |= {"speed-up": (peer[0] / seconds, "x"), "CPU ratio": (peer[2] / cpu, "x")}
    steps = report.get("seconds") or {}
    print("our dedup seconds per step:", steps)
    if steps.get("features"):
        figures["features step"] = (text_mb / steps["features"], "MB/s")
        print(f"our features step: {text_mb / steps['features']:.1f} MB/s of text")
    print(f"our class-data archive: {'mapped' if warm else 'recorded by this run (the first)'} (docs/running.md)")
    print(
        f"our side: {'two commands' if args.as_user else 'one process'}, {'cold' if args.cold else 'caches as found'}"
    )
    print(load_line())
    if peer is not None:
        figures |= precision_report(docs, work, args.sample)
    flags = {"archive mapped": warm, "as user": args.as_user, "cold caches": args.cold}
    figures |= {name: (float(flag), "bool") for name, flag in flags.items()}
    write_result("vs_bigcode", args, figures)


def ours_removed(docs: Corpus, run: Path) -> dict[int, int]:
    """Our removed documents (corpus indices), each with its partner: the other end of its verified edge of the
    highest Jaccard, or for an exact copy (no edge) a member of its cluster with the same text (else its survivor)."""
    index = {offset: i for i, offset in enumerate(docs.offsets)}
    table = pq.read_table(run / "documents", columns=["doc_id", "position"]).to_pydict()
    doc = {d: index[p] for d, p in zip(table["doc_id"], table["position"], strict=True)}
    comps = pq.read_table(run / "dedup" / "components", columns=["doc_id", "component", "survivor"]).to_pydict()
    removed = {doc[d] for d, s in zip(comps["doc_id"], comps["survivor"], strict=True) if d != s}
    edges = pq.read_table(run / "dedup" / "edges", columns=["src", "dst", "jaccard"]).to_pydict()
    best: dict[int, tuple[float, int]] = {}
    for a, b, jac in zip(edges["src"], edges["dst"], edges["jaccard"], strict=True):
        for x, y in ((doc[a], doc[b]), (doc[b], doc[a])):
            if x in removed and (x not in best or (-jac, y) < (-best[x][0], best[x][1])):
                best[x] = (jac, y)
    members: dict[int, list[int]] = {}
    for d, c in zip(comps["doc_id"], comps["component"], strict=True):
        members.setdefault(c, []).append(doc[d])
    survivor = {doc[d]: doc[s] for d, s in zip(comps["doc_id"], comps["survivor"], strict=True)}
    partner = {}
    for group in members.values():
        for x in (x for x in group if x in removed):
            same = [y for y in sorted(group) if y != x and docs.digests[y] == docs.digests[x]]
            partner[x] = best[x][1] if x in best else (same or [survivor[x]])[0]
    return partner


def precision_report(docs: Corpus, work: Path, size: int) -> dict[str, tuple[float, str]]:
    """Each side's precision on a sample of ``size`` of its removed documents, and the removals they disagree on."""
    peer_out = (work / "peer-out").rglob("*.parquet")
    peer_removed = set(range(len(docs.offsets))) - {d for f in peer_out for d in pq.read_table(f)["doc"].to_pylist()}
    partner = ours_removed(docs, work / "ours-run")
    ours_sample, peer_sample = sample(partner, size, SEED), sample(peer_removed, size, SEED)
    wanted = set(ours_sample) | set(peer_sample)
    texts = {i: t for i, t in docs.texts() if i in wanted}
    best, pairs = scan(docs.texts(), texts, {i: [partner[i]] for i in ours_sample}, NGRAM)

    def share(values: list[float]) -> str:
        return f"{sum(v >= THRESHOLD for v in values) / len(values):.3f}" if values else "n/a"

    matched = [pairs[(i, partner[i])] for i in ours_sample]
    print(f"precision against exact Jaccard >= {THRESHOLD} (K={NGRAM} word shingles, brute force, seed {SEED}):")
    print(f"{'':28}{'removed':>9}{'sampled':>9}{'matched pair':>14}{'best match':>12}")
    for name, removed, picked, pair in (
        ("BigCode script", peer_removed, peer_sample, "n/a"),
        ("ingest + dedup (here)", set(partner), ours_sample, share(matched)),
    ):
        print(f"{name:28}{len(removed):9}{len(picked):9}{pair:>14}{share([best[i][1] for i in picked]):>12}")
    print(
        f"removed by the BigCode script, kept here: {len(peer_removed - set(partner))}; removed here, kept by the "
        f"BigCode script: {len(set(partner) - peer_removed)} (both include clusters that kept another member)"
    )
    copies = sum(docs.digests[i] == docs.digests[j] for i, j in partner.items())
    print(
        f"removed here: {copies / len(docs.offsets):.1%} of documents exact copies, "
        f"{(len(partner) - copies) / len(docs.offsets):.1%} near duplicates"
    )
    precision = {
        "removed exact": (copies / len(docs.offsets), "fraction"),
        "removed near": ((len(partner) - copies) / len(docs.offsets), "fraction"),
    }
    for label, values in (("precision ours", matched), ("precision script", [best[i][1] for i in peer_sample])):
        if values:
            precision[label] = (sum(v >= THRESHOLD for v in values) / len(values), "fraction")
    return precision


if __name__ == "__main__":
    main()
