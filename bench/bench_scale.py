"""Seconds per GB per stage of the whole pipeline on a Spark standalone cluster, from 1 to 10 GB (issue #32, 2).

Run: python -m bench scale --corpus /tmp/pipeline-bench/release-corpus-10240mb --sizes 1,2,5,10 \\
         --json bench-scale.json
     python -m bench scale --corpus constant --sizes 1,2,5,10   # corpora/constant.py's, built if needed
     python -m bench scale --corpus constant --sizes 1,2,5,10 --spans   # with the spans stage (issue #48)
     python -m bench scale --corpus uniform --sizes 1,5,10 --spans      # its --uniform variant: the mix in every GB

How it measures: docs/benchmarks.md, Method notes, scale.
"""

from __future__ import annotations

import argparse
import bisect
import calendar
import contextlib
import json
import math
import os
import re
import shutil
import sys
import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import psutil
import yaml

from bench.harness import DATA, REPO, ProcessTree, arguments, commit, machine, write_result
from bench.standalone import Cluster, build_zip, cluster_config, run_job
from bench.vs_corpus import lines
from corpora import constant
from pipeline.run.registry import STAGE_NAMES

GB = 10**9
MEMORY = "2g"  # the driver's and each executor's
SEQUENCE_LENGTH = 2048
SPANS = {"exact_substring": {"min_tokens": 50, "tokenizer": "bytes"}}  # conf/local.yaml's commented example
TRAINING_TOKENIZER = {"class": "HuggingFaceTokenizer", "tokenizer_path": ["run/tokenizer"], "vocab_extra_ids": 0}

EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


class TreeMemory(ProcessTree):
    """The driver's tree and each executor JVM's (started by the ``workers`` pids when given), with the load."""

    def __init__(self, driver_pid: int, workers: set[int] | None = None, interval: float = 0.5) -> None:
        super().__init__(driver_pid, interval)
        self.workers = workers
        self.executors: dict[int, ProcessTree] = {}
        self.loads: list[float] = []
        self.series: list[tuple[float, float]] = []  # (time, CPU seconds of the driver and executors so far)
        self.driver: list[tuple[float, int]] = []  # (time, bytes of RSS of the driver's tree)

    def sample(self) -> None:
        super().sample()
        for proc in psutil.process_iter(["name", "cmdline"]):
            if "java" in (proc.info.get("name") or "") and EXECUTOR_CLASS in (proc.info.get("cmdline") or []):
                if self.workers is None or proc.ppid() in self.workers:
                    self.executors.setdefault(proc.pid, ProcessTree(proc.pid)).sample()
        self.loads.append(os.getloadavg()[0])
        self.series.append((time.time(), self.cpu() + sum(tree.cpu() for tree in self.executors.values())))
        self.driver.append((time.time(), self.now["total"]))

    def report(self) -> dict:
        """Peak MiB of the driver and of each executor, CPU seconds, the mean load."""
        keys = ("jvm", "python", "total")
        return {
            "driver_cpu_s": round(self.cpu(), 1),
            "executors_cpu_s": round(sum(tree.cpu() for tree in self.executors.values()), 1),
            "driver_mib": self.mib(*keys),
            "executors_mib": [tree.mib(*keys) for tree in self.executors.values()],
            "load_mean": round(sum(self.loads) / len(self.loads), 2) if self.loads else None,
        }


def _source_of(line: bytes) -> str:
    """The record's ``source`` as a pipeline source name."""
    head = b'{"source": "'
    if line.startswith(head):
        name = line[len(head) : line.index(b'"', len(head))].decode()
    else:
        name = str(json.loads(line).get("source", "corpus"))
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip("_.-") or "corpus"


def prefix(corpus: Path, nbytes: int, into: Path) -> tuple[int, dict[str, int]]:
    """The corpus's first ``nbytes`` in whole lines into ``into/<source>/<shard>``: bytes taken, bytes per source."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    per_source, outs, current = Counter[str](), {}, None
    with contextlib.ExitStack() as files:
        for shard, line in lines(corpus, nbytes, lambda _, line: len(line)):
            if shard != current:  # one shard's files open at a time
                files.close()
                outs, current = {}, shard
            name = _source_of(line)
            if name not in outs:
                (into / name).mkdir(exist_ok=True)
                outs[name] = files.enter_context((into / name / shard.name).open("wb"))
            outs[name].write(line)
            per_source[name] += len(line)
    taken = sum(per_source.values())
    if taken < nbytes * 0.99:
        raise SystemExit(f"error: --corpus: {corpus} holds {taken / GB:.3f} GB, less than {nbytes / GB:g} GB")
    return taken, dict(sorted(per_source.items()))


def config(data: Path, per_source: dict[str, int], out: Path, index: Path, code: set[str], spans: bool = False) -> dict:
    """conf/dataproc.yaml's stages, one source per corpus ``source`` (``code`` ones unfiltered), sized for the input;
    with ``spans``, the spans stage's exact substrings too."""
    base = yaml.safe_load((REPO / "conf" / "dataproc.yaml").read_text())
    nbytes = sum(per_source.values())
    sources = []
    for name in per_source:
        source = {"name": name, "paths": [str(data / name)], "format": "jsonl", "keep_fields": ["path"]}
        sources.append({**source, "filter": []} if name in code else source)
    # ~64 MB of input per shuffle partition (AQE coalesces small ones)
    settings = {
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.shuffle.partitions": str(max(8, math.ceil(16 * nbytes / GB))),
    }
    # the training split only: a small source may keep too few documents for a validation split
    training = {"sequence_length": SEQUENCE_LENGTH, "split": "1000,0,0", "tokenizer": TRAINING_TOKENIZER}
    training["samples"] = [max(1, nbytes // 4 // SEQUENCE_LENGTH), 0, 0]  # about 4 bytes per token of input
    return cluster_config(
        "bench-scale",
        out,
        sources,
        settings,
        **{k: base[k] for k in ("ingest", "filter", "tokenizer", "blend")},
        dedup={**base["dedup"], "index": str(index)},
        tokenize={"partitions": max(4, math.ceil(8 * nbytes / GB))},
        training=training,
        **({"spans": SPANS} if spans else {}),
    )


def _windows(stages: list[dict]) -> dict[str, tuple[float, float]]:
    """(start, end) in epoch seconds of each finished report.json stage."""
    out = {}
    for row in stages:
        if row.get("finished"):
            end = calendar.timegm(time.strptime(row["finished"], "%Y-%m-%dT%H:%M:%SZ"))
            out[row["stage"]] = (end - float(row["seconds"]), float(end))
    return out


def driver_peak_per_stage(driver: list[tuple[float, int]], stages: list[dict]) -> dict[str, float]:
    """Peak MiB of the driver's tree per stage: the largest ``driver`` (time, RSS bytes) sample inside the stage, or
    the last one before it when the stage was shorter than the sampling interval."""
    times = [t for t, _ in driver]
    out = {}
    for name, (start, end) in _windows(stages).items():
        first, last = bisect.bisect_left(times, start), bisect.bisect_right(times, end)
        inside = [rss for _, rss in driver[first:last]] or [rss for _, rss in driver[max(first - 1, 0) : first]]
        if inside:
            out[name] = round(max(inside) / 2**20, 1)
    return out


def cpu_per_stage(series: list[tuple[float, float]], stages: list[dict]) -> dict[str, float]:
    """CPU seconds per stage: ``series`` (time, CPU so far) at each report.json stage's end minus at its start."""
    times = [t for t, _ in series]

    def at(moment: float) -> float:
        index = bisect.bisect_right(times, moment) - 1
        return series[index][1] if index >= 0 else 0.0

    out = {}
    for name, (start, end) in _windows(stages).items():
        out[name] = round(at(end) - at(start), 1)
    return out


def measure(cluster: Cluster, dist: Path, args: argparse.Namespace, size_gb: float) -> dict:
    """One spark-submitted run over a ``size_gb`` GB prefix: its figures (its outputs removed)."""
    work, tag = args.work, f"{size_gb:g}gb"
    data, out, index = work / f"corpus-{tag}", work / f"run-{tag}", work / f"index-{tag}"
    nbytes, per_source = prefix(args.corpus, int(size_gb * GB), data)
    shutil.rmtree(index, ignore_errors=True)
    load_before = os.getloadavg()[0]
    raw = config(data, per_source, out, index, set(args.code_sources.split(",")), args.spans)
    memory = partial(TreeMemory, workers=cluster.pids())
    run, tree, report = run_job(cluster, dist, raw, work / f"pipeline-{tag}.yaml", MEMORY, tree=memory)
    stages = {row["stage"]: float(row["seconds"]) for row in report["timeline"]["stages"]}
    seconds = {**stages, "stages": sum(stages.values()), "submit": run["wall_s"]}
    row = {
        "size_gb": size_gb,
        "input_bytes": nbytes,
        "input_bytes_per_source": per_source,
        **{k: report["summary"][k] for k in ("documents_read", "survivors", "tokens")},
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "seconds_per_gb": {k: round(v / (nbytes / GB), 1) for k, v in seconds.items()},
        "dedup_steps": {row["step"]: row["seconds"] for row in report["timeline"].get("dedup_steps") or []},
        "load_before": round(load_before, 2),
        **tree.report(),
        "stage_cpu_s": cpu_per_stage(tree.series, report["timeline"]["stages"]),
        "stage_driver_mib": driver_peak_per_stage(tree.driver, report["timeline"]["stages"]),
    }
    for path in (out, index, data, work / "spark-local", *cluster.root.glob("worker*/app-*")):
        shutil.rmtree(path, ignore_errors=True)
    return row


def _cpu(row: dict) -> float | None:
    """CPU seconds of the driver and executors (None in old figures)."""
    return float(row["driver_cpu_s"] + row["executors_cpu_s"]) if "executors_cpu_s" in row else None


def _cpu_per_gb(row: dict) -> float | None:
    return None if (cpu := _cpu(row)) is None else cpu / (row["input_bytes"] / GB)


def _steps(rows: list[dict]) -> list[tuple[dict, dict, float]]:
    """(next smaller row, row, GB added) of each row but the smallest, by input size."""
    by_size = sorted(rows, key=lambda row: row["input_bytes"])
    return [(a, b, (b["input_bytes"] - a["input_bytes"]) / GB) for a, b in zip(by_size, by_size[1:], strict=False)]


def marginal_cpu_per_gb(rows: list[dict]) -> list[float | None]:
    """CPU seconds each size adds per GB over the next smaller one (None for the smallest or without CPU)."""
    added = {}
    for smaller, row, gb in _steps(rows):
        cpu, before = _cpu(row), _cpu(smaller)
        added[id(row)] = None if cpu is None or before is None else (cpu - before) / gb
    return [added.get(id(row)) for row in rows]


def marginal_stage_cpu(rows: list[dict]) -> list[dict[str, float]]:
    """Per size after the smallest, the CPU seconds each stage adds per GB over the next smaller one."""
    stages = [(a["stage_cpu_s"], b["stage_cpu_s"], gb) for a, b, gb in _steps([r for r in rows if "stage_cpu_s" in r])]
    return [{n: round((now[n] - was[n]) / gb, 1) for n in now if n in was} for was, now, gb in stages]


def figures(rows: list[dict]) -> dict[str, tuple[float, str]]:
    """CPU seconds per GB at each size."""
    return {
        f"{row['size_gb']:.2f} GB": (per_gb, "CPU s/GB") for row in rows if (per_gb := _cpu_per_gb(row)) is not None
    }


def markdown(result: dict) -> str:
    """docs/scaling.md's tables from the figures (also printed after a run)."""
    rows = result["sizes"]
    names = [n for n in STAGE_NAMES if n in rows[0]["seconds_per_gb"]]
    head = ["GB", *names, "all stages", "submit", "ratio", "CPU s/GB", "CPU ratio", "CPU s per added GB"]
    head += ["driver MiB", "executor MiB", "load"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first, first_cpu = rows[0]["seconds_per_gb"]["submit"], _cpu_per_gb(rows[0])
    for row, added in zip(rows, marginal_cpu_per_gb(rows), strict=True):
        per_gb = row["seconds_per_gb"]
        executors = "/".join(f"{e['total']:.0f}" for e in row["executors_mib"])
        cells = [f"{row['input_bytes'] / GB:.2f}", *(f"{per_gb[n]:.1f}" for n in names)]
        cells += [f"{per_gb['stages']:.1f}", f"{per_gb['submit']:.1f}", f"{per_gb['submit'] / first:.2f}"]
        cpu = _cpu_per_gb(row)
        cells += [f"{cpu:.0f}" if cpu else "-", f"{cpu / first_cpu:.2f}" if cpu and first_cpu else "-"]
        cells += ["-" if added is None else f"{added:.0f}"]
        cells += [f"{row['driver_mib']['total']:.0f}", executors, f"{row['load_mean']}"]
        lines.append("| " + " | ".join(cells) + " |")
    if measured := _steps([row for row in rows if "stage_cpu_s" in row]):  # CPU s per added GB per stage
        lines += ["", "| GB added | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
        for (smaller, row, _), added in zip(measured, marginal_stage_cpu(rows), strict=True):
            span = f"{smaller['input_bytes'] / GB:.2f} -> {row['input_bytes'] / GB:.2f}"
            lines.append(f"| {span} | " + " | ".join(f"{added[n]:.0f}" if n in added else "-" for n in names) + " |")
    if memory := [row for row in rows if "stage_driver_mib" in row]:  # the driver's peak per stage
        lines += ["", "| GB | driver MiB: " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
        for row in memory:
            peaks = row["stage_driver_mib"]
            cells = [f"{peaks[n]:.0f}" if n in peaks else "-" for n in names]
            lines.append(f"| {row['input_bytes'] / GB:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    defaults = {
        "sizes": "1,2,5,10",
        "work": DATA / "scale",
        "code_sources": f"pypi,python,{constant.CODE_SOURCE}",
        "corpus": None,
    }
    args = arguments(__doc__, **defaults, spans=False, json=None, from_json=None).parse_args()
    if args.from_json:
        earlier = json.loads(args.from_json.read_text())
        print(markdown(earlier))
        write_result("scale", args, figures(earlier["sizes"]))
        return
    sizes = [float(s) for s in args.sizes.split(",") if s.strip().replace(".", "", 1).isdigit()]
    if len(sizes) != args.sizes.count(",") + 1 or min(sizes) <= 0:
        raise SystemExit(f"error: --sizes: not a comma-separated list of sizes > 0 GB: {args.sizes!r}")
    if args.corpus in (Path("constant"), Path("uniform")):  # corpora/constant.py's, built if needed
        smallest = constant.at_least(max(sizes) * GB / 1e6)
        args.corpus = smallest if args.corpus == Path("constant") else constant.build_uniform(smallest)
    if args.corpus is None or not args.corpus.exists():
        raise SystemExit(f"error: --corpus: {args.corpus} does not exist (a directory of JSONL shards, or one file)")
    args.work.mkdir(parents=True, exist_ok=True)
    cluster_facts = {"workers": 2, "cores_per_worker": 1, "executor_memory": MEMORY, "driver_memory": MEMORY}
    cluster_facts |= {"spans": SPANS} if args.spans else {}
    result: dict[str, Any] = {"command": " ".join(["python -m bench scale", *sys.argv[1:]]), "commit": commit()}
    result |= {"machine": machine(), "cluster": cluster_facts, "corpus": str(args.corpus), "sizes": []}
    dist = build_zip(args.work / "dist")
    with Cluster(args.work / "cluster", workers=2, cores=1, memory=MEMORY) as cluster:
        for size in sizes:
            row = measure(cluster, dist, args, size)
            result["sizes"].append(row)
            print(f"{size:g} GB done in {row['seconds']['submit']:.0f} s (load {os.getloadavg()[0]:.1f})", flush=True)
            print(f"  {row['documents_read']:,} documents, {row['survivors']:,} survivors, {row['tokens']:,} tokens")
            if args.json:  # after every size, so a long series keeps what it measured
                args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(markdown(result))
    write_result("scale", args, figures(result["sizes"]))


if __name__ == "__main__":
    main()
