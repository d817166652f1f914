"""What signals cost the filter stage (issue #45, items 1-2: at most 10 %): the stage's batch step
(``filter_partition``, what each Spark task runs) over the first ``--mb`` MB of the real corpus (bench/real_corpus.py)
with conf/dataproc.yaml's filter list, in one process, CPU seconds (best of ``--repeat``):

- ``baseline``: the filters and batch step at ``--baseline-rev`` (before signals: each rule filter stopped at the
  first failing rule and wrote no signals), when given;
- ``decide``: today's, every measure of every document taken and ``filter/signals/`` rows made;
- ``annotate``: today's with ``annotate: true`` on every entry (every filter sees every document, drops nothing);
- ``decide`` and ``annotate`` again over the documents every filter keeps (``kept``): each filter measures every
  one of them in both, so their ratio is what annotating itself adds (the fair comparison: over the whole corpus a
  filtered run's later filters see only what the earlier ones kept, annotate's see every document; the documents
  each filter measured are printed for both).

Also the signals table's size as Parquet (pyarrow, snappy) per GB of input text. The same documents kept is checked
between baseline and decide.

``--corpus release``: the first ``--mb`` MB of the 200 MB release corpus (bench/release_corpus.py) instead.

Run: python -m bench filter_signals [--mb 20] [--baseline-rev REV] [--corpus release]
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench import real_corpus, release_corpus
from bench.harness import arguments, best_of, dataproc_filters, module_at, run_config, write_result
from pipeline.filter import batches, registry
from pipeline.filter.plan import Plan, make_plan
from pipeline.numba_backend import FILTER

ROWS = 10_000
RULES = ("language", "gopher_repetition", "gopher_quality", "c4", "fineweb", "pii")


def documents(megabytes: float, corpus: str = "real") -> pa.RecordBatch:
    """The first ``megabytes`` MB of text of the real (or release) corpus as one batch (doc_id, source, text)."""
    texts: list[str] = []
    size = 0
    path = real_corpus.build(megabytes) if corpus == "real" else release_corpus.build(200) / "part-00000.jsonl"
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            texts.append(json.loads(line)["text"])
            size += len(texts[-1].encode("utf-8"))
            if size >= megabytes * 1e6:
                break
    return pa.RecordBatch.from_pydict(
        {"doc_id": list(range(len(texts))), "source": ["bench"] * len(texts), "text": texts}
    )


def plan_of(annotate: bool) -> Plan:
    filters = [{**f, "annotate": True} if annotate else f for f in dataproc_filters()]
    return make_plan(run_config("/tmp/unused", "/tmp/unused", filters))


def baseline_plan(rev: str) -> tuple[Plan, Any]:
    """Today's plan with every step's filter class and the batch step as they were at ``rev``."""
    saved = dict(registry._FILTERS)
    try:
        plan = plan_of(False)
        steps = {}
        for source, listed in plan.steps.items():
            steps[source] = []
            for step in listed:
                path = step.target.partition(":")[0].replace(".", "/") + ".py"
                old = module_at(rev, path)
                cls = step.target.partition(":")[2]
                options = getattr(old, cls).Options(**step.options.values())  # the options class of that revision
                target = f"{old.__name__}:{cls}"
                steps[source].append(dataclasses.replace(step, target=target, options=options, signals={}))
        old_batches = module_at(rev, "pipeline/filter/batches.py")
    finally:
        registry._FILTERS.clear()
        registry._FILTERS.update(saved)
    return dataclasses.replace(plan, steps=steps, signals=pa.schema([])), old_batches


def run(module: Any, plan: Plan, batch: pa.RecordBatch, signals: bool) -> pa.Table:
    schema = module.output_schema(batch.schema, plan.signals) if signals else module.output_schema(batch.schema)
    parts = [batch.slice(i, ROWS) for i in range(0, batch.num_rows, ROWS)]
    return pa.Table.from_batches(list(module.filter_partition(iter(parts), plan, schema)), schema)


def _columns_of(rows: pa.Table, rule: str, plan: Plan) -> list[pa.Scalar]:
    """Per row, whether filter ``rule`` measured it: its first signal column (null: not seen)."""
    column = next(c for c in plan.signals.names if c.startswith(f"{rule}."))
    return list(rows.column(column))


def per_filter(plan: Plan, batch: pa.RecordBatch) -> dict[str, tuple[float, float]]:
    """Per filter of one run of ``plan`` over ``batch``: CPU seconds in its ``apply`` and MB of text it measured."""
    spent: dict[str, list[float]] = {rule: [0.0, 0.0] for rule in RULES}
    original = batches.Recorder.apply

    def timed(self: Any, part: pa.RecordBatch) -> Any:
        started = time.process_time()
        result = original(self, part)
        spent[self.name][0] += time.process_time() - started
        spent[self.name][1] += pc.sum(pc.binary_length(part.column("text"))).as_py() / 1e6 if part.num_rows else 0.0
        return result

    batches.Recorder.apply = timed  # type: ignore[method-assign]
    try:
        run(batches, plan, batch, True)
    finally:
        batches.Recorder.apply = original  # type: ignore[method-assign]
    return {rule: (cpu, mb) for rule, (cpu, mb) in spent.items()}


def decide_rate_of(found: tuple[float, float]) -> float:
    """CPU seconds per MB measured."""
    return found[0] / found[1] if found[1] else 0.0


def kept_ids(rows: pa.Table) -> list[int]:
    return sorted(rows.filter(pc.equal(rows.column("kind"), "kept")).column("doc_id").to_pylist())


def main() -> None:
    parser = arguments(__doc__, mb=20.0, repeat=2, baseline_rev="")
    parser.add_argument("--corpus", choices=("real", "release"), default="real", help="the corpus (default real)")
    args = parser.parse_args()
    batch = documents(args.mb, args.corpus)
    mb = float(pc.sum(pc.binary_length(batch.column("text"))).as_py()) / 1e6
    FILTER.set(True)
    current, annotated = plan_of(False), plan_of(True)
    run(batches, current, batch.slice(0, 20), True)  # models and kernels load here
    figures: dict[str, tuple[float, str]] = {}
    results: dict[str, pa.Table] = {}
    cases: list[tuple[str, Any, Plan, bool]] = [
        ("decide", batches, current, True),
        ("annotate", batches, annotated, True),
    ]
    if args.baseline_rev:
        old_plan, old_batches = baseline_plan(args.baseline_rev)
        run(old_batches, old_plan, batch.slice(0, 20), False)
        cases.insert(0, ("baseline", old_batches, old_plan, False))
    for name, module, plan, signals in cases:
        seconds, results[name] = best_of(lambda m=module, p=plan, s=signals: run(m, p, batch, s), args.repeat)
        figures[name] = (seconds, "CPU s")
        print(f"{name:<9} {seconds:7.2f} CPU s  {mb / seconds:6.2f} MB/s")
    for name in ("decide", "annotate"):
        rows = results[name]
        signal_rows = rows.filter(pc.equal(rows.column("kind"), "signals"))
        seen = {r: sum(c.is_valid for c in _columns_of(signal_rows, r, current)) for r in RULES}
        print(f"{name}: documents each filter measured: {seen} (sum {sum(seen.values())})")
    kept = batch.filter(pc.is_in(batch.column("doc_id"), pa.array(kept_ids(results["decide"]), pa.int64())))
    for name, plan in (("decide", current), ("annotate", annotated)):
        seconds, _ = best_of(lambda p=plan: run(batches, p, kept, True), args.repeat)
        figures[f"{name}, kept documents"] = (seconds, "CPU s")
    ratio = figures["annotate, kept documents"][0] / figures["decide, kept documents"][0]
    figures["annotate / decide, kept documents"] = (ratio, "x")
    figures["annotate / decide"] = (figures["annotate"][0] / figures["decide"][0], "x")
    print(f"annotate / decide: {figures['annotate / decide'][0]:.3f}")
    print(f"over the {kept.num_rows} documents every filter keeps, annotate / decide: {ratio:.3f}")
    per_mb = {name: per_filter(plan, batch) for name, plan in (("decide", current), ("annotate", annotated))}
    for rule in RULES:
        (d_cpu, d_mb), (a_cpu, a_mb) = per_mb["decide"][rule], per_mb["annotate"][rule]
        line = f"decide {d_cpu / d_mb:.3f} CPU s/MB of {d_mb:.1f} MB, annotate {a_cpu / a_mb:.3f} of {a_mb:.1f} MB"
        print(f"  {rule}: {line}")
    decide_rate = sum(c for c, _ in per_mb["decide"].values()) / sum(m for _, m in per_mb["decide"].values())
    at_decide = sum(decide_rate_of(per_mb["decide"][r]) * per_mb["annotate"][r][1] for r in RULES)
    spent = sum(c for c, _ in per_mb["annotate"].values())
    figures["annotate / decide at the same MB per filter"] = (spent / at_decide, "x")
    print(f"annotate's filters / its MB measured at decide's CPU per MB, filter by filter: {spent / at_decide:.3f}")
    print(f"(decide's mean CPU per MB measured: {decide_rate:.3f})")
    if "baseline" in results:
        assert kept_ids(results["baseline"]) == kept_ids(results["decide"]), "decide keeps other documents"
        for name in ("decide", "annotate"):
            ratio = figures[name][0] / figures["baseline"][0]
            figures[f"{name} / baseline"] = (ratio, "x")
            print(f"{name} / baseline: {ratio:.3f}")
    rows = results["decide"]
    signal_rows = rows.filter(pc.equal(rows.column("kind"), "signals")).select(
        ["doc_id", "source", *current.signals.names]
    )
    sink = io.BytesIO()
    pq.write_table(signal_rows, sink)
    per_gb = sink.tell() / (mb / 1000)
    figures["signals per GB of text"] = (per_gb / 1e6, "MB")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{mb:.1f} MB, {batch.num_rows} documents, load {load:.2f}")
    columns = signal_rows.num_columns
    print(f"signals table: {sink.tell() / 1e6:.2f} MB ({per_gb / 1e6:.1f} MB per GB of text, {columns} columns)")
    write_result("filter_signals", args, figures)


if __name__ == "__main__":
    main()
