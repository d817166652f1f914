"""Benchmark: the filter stage's batch step with our fastText predictor (pipeline/fasttext/) vs fasttext-predict.

    python bench/bench_filter_fasttext.py [REPEAT]   # the bundled sample's texts REPEAT times (default 20)

Runs conf/local.yaml's filter list, and the language filter alone, over the sample's documents in one process
(``filter_partition``, what each Spark task runs), best CPU seconds of 3, first with our predictor, then with the
language filter's fasttext-predict path (its C++ ``predict`` per line: fasttext-predict's batched
``multilinePredict`` returns labels without probabilities, which ``min_score`` needs). Checks that both keep the
same documents and prints the ratios (issue 42: keep the clone if the whole stage gains >= 2x).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.config import PipelineConfig, load_config
from pipeline.filter.batches import filter_partition, output_schema
from pipeline.filter.plan import Plan, make_plan
from pipeline.filter.rules import language

ROOT = Path(__file__).resolve().parents[1]

BATCH = 2000


def sample_texts() -> list[str]:
    """Every text of the bundled sample (web and wiki JSONL, the forum's Parquet bodies)."""
    texts: list[str] = []
    sample = ROOT / "pipeline" / "sample"
    for path in sorted((sample / "web").glob("*.jsonl*")) + sorted((sample / "wiki").glob("*.jsonl.gz")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                try:
                    texts.append(json.loads(line)["text"])
                except (ValueError, KeyError, TypeError):
                    pass  # the sample's bad records, on purpose
    texts += pq.read_table(sample / "forum" / "forum.parquet").column("body").to_pylist()
    return [t for t in texts if isinstance(t, str) and t]


def timed(plan: Plan, texts: list[str], repeats: int = 3) -> tuple[float, int]:
    """(best CPU seconds, documents kept) of the batch step over ``texts`` as source ``web``."""
    batches = [
        pa.RecordBatch.from_pydict(
            {
                "doc_id": pa.array(range(i, i + len(texts[i : i + BATCH])), pa.int64()),
                "source": ["web"] * len(texts[i : i + BATCH]),
                "text": texts[i : i + BATCH],
            }
        )
        for i in range(0, len(texts), BATCH)
    ]
    schema = output_schema(batches[0].schema)
    best, kept = float("inf"), 0
    for _ in range(repeats):
        start = time.process_time()
        rows = list(filter_partition(iter(batches), plan, schema))
        best = min(best, time.process_time() - start)
        kept = sum(b.column("kind").to_pylist().count("kept") for b in rows)
    return best, kept


def plan_of(sets: list[str]) -> Plan:
    config: PipelineConfig = load_config(ROOT / "conf" / "local.yaml", sets)
    config.sources = config.sources[:1]  # every text is the first source's: the run's filter list
    return make_plan(config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repeat", nargs="?", type=int, default=20, help="copies of the bundled sample (default 20)")
    repeat = parser.parse_args().repeat
    texts = sample_texts() * repeat
    whole, alone = plan_of([]), plan_of(["filter=[{name: language, languages: [en], min_score: 0.65}]"])
    timed(whole, texts[:BATCH], 1)  # model, numba kernels loaded outside the timing
    ours_whole, kept = timed(whole, texts)
    ours_alone, _ = timed(alone, texts)
    language.load_predictor = lambda path: None  # type: ignore[assignment]  # the fasttext-predict path
    timed(whole, texts[:BATCH], 1)
    theirs_whole, kept_theirs = timed(whole, texts)
    theirs_alone, _ = timed(alone, texts)
    assert kept == kept_theirs, (kept, kept_theirs)
    size = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{len(texts)} documents, {size:.1f} MB, {kept} kept either way (best CPU s of 3)")
    print(f"language filter alone: ours {ours_alone:.2f} s, fasttext-predict {theirs_alone:.2f} s: "
          f"{theirs_alone / ours_alone:.2f}x")  # fmt: skip
    print(f"whole filter list:     ours {ours_whole:.2f} s, fasttext-predict {theirs_whole:.2f} s: "
          f"{theirs_whole / ours_whole:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
