"""Where the tokenize stage's Python-worker CPU goes beyond the bare encoder's, without Spark.

    python -m bench tokenize_breakdown            # 200 MB, like bench_tokenize.py
    python -m bench tokenize_breakdown --mb 50 --rounds 2
    python -m bench tokenize_breakdown --mb 10 --kind tiktoken     # a model's own tokenizer (bench_tokenize.py)

Same corpus and tokenizer as bench/bench_tokenize.py. In this process, one thread, interleaved:

* **bare encoder**: ``utf8_buffers`` -> ``encode_utf8_batch`` over Arrow batches of the stage's ``BATCH_ROWS``,
  from an empty pre-token cache (bench_tokenize.py's baseline);
* **tokenize_partition**: the stage's Arrow body as a Spark worker runs it: the documents split
  into 4 contiguous partitions (what ``repartitionByRange`` on doc_id gives), 2 per "worker", each
  worker unpickling the broadcast tokenizer (its own cold pre-token cache; the tables shared with the
  tokenizer unpickled before timing, as in a reused Spark worker's next run), writing real shards
  to a temporary directory.

The difference is the stage's own cost outside Spark (special-token text search, UTF-8 check,
shard writing, unpickling). Spark's cost of feeding the workers (Arrow IPC in, per-task overhead) is
bench_tokenize.py's no-op floor. A cProfile of one ``tokenize_partition`` round (CPU time) follows.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pickle
import pstats
import shutil
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from bench.bench_tokenize import BATCH_ROWS, EOT, FIXTURES, bare_encoder, library_kind, mixed_corpus
from pipeline.megatron.format import dtype_for_vocab
from pipeline.tokenize.batches import TaskAttempt, tokenize_partition
from pipeline.tokenizer import BPETokenizer

PARTITIONS, WORKERS = 4, 2


def stage_body(
    blob: bytes, parts: list[pa.Table], eod: int, profile: cProfile.Profile | None = None, dtype: str = "uint16"
) -> float:
    """CPU seconds of ``tokenize_partition`` over ``parts``, split among ``WORKERS`` unpickled tokenizers."""
    base = tempfile.mkdtemp(prefix="bench-tokenize-breakdown-")
    per_worker = len(parts) // WORKERS
    started = time.process_time()
    if profile is not None:
        profile.enable()
    for w in range(WORKERS):
        tok = pickle.loads(blob)
        for p in range(w * per_worker, (w + 1) * per_worker):
            batches = iter(parts[p].to_batches(max_chunksize=BATCH_ROWS))
            task = TaskAttempt(p, 0, p)
            specials = tuple(tok.special_tokens) if isinstance(tok, BPETokenizer) else tok.special_texts()
            for _ in tokenize_partition(batches, task, tok, f"{base}/out", f"{base}/tmp", dtype, eod, specials):
                pass
    if profile is not None:
        profile.disable()
    seconds = time.process_time() - started
    shutil.rmtree(base)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=200, help="megabytes of text (default 200)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--kind", default="bpe", choices=("bpe", "tiktoken", "huggingface", "sentencepiece"))
    parser.add_argument("--model", default="cl100k", choices=("cl100k", "qwen3.6"), help="--kind tiktoken's file")
    args = parser.parse_args()

    texts = mixed_corpus(args.mb)
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    table = pa.table({"text": texts})
    del texts
    n = table.num_rows
    parts = [table.slice(p * n // PARTITIONS, (p + 1) * n // PARTITIONS - p * n // PARTITIONS) for p in range(4)]
    if args.kind == "bpe":
        tok = BPETokenizer.from_files(args.fixtures / "gpt2_vocab.json", args.fixtures / "gpt2_merges.txt", [EOT])
    else:
        work = Path(tempfile.mkdtemp(prefix="bench-tokenize-breakdown-"))
        _, tok, _, eod_text = library_kind(args.kind, table.column("text").to_pylist()[:2000], work, args.model)
    eod = tok.token_id(EOT if args.kind == "bpe" else eod_text)
    dtype = dtype_for_vocab(tok.vocab_size).name
    tok.encode("load the kernels before timing")
    blob = pickle.dumps(tok)
    pickle.loads(blob)  # a reused worker has decoded this tokenizer in an earlier run (a fresh one: +0.07 s)
    print(f"corpus: {n:,} documents, {mb:.1f} MB; {PARTITIONS} partitions over {WORKERS} workers")
    bare, body = [], []
    for r in range(args.rounds):
        bare.append(bare_encoder(tok, table, eod))
        body.append(stage_body(blob, parts, eod, dtype=dtype))
        load = os.getloadavg()[0]
        print(f"round {r + 1}: bare encoder {bare[-1]:.3f} CPU s, tokenize_partition {body[-1]:.3f} CPU s", end="")
        print(f" (load {load:.1f})")
    extra = min(body) - min(bare)
    print(
        f"best: bare {min(bare):.3f} CPU s = {1000 * min(bare) / mb:.1f} ms/MB; tokenize_partition {min(body):.3f} "
        f"CPU s = {1000 * min(body) / mb:.1f} ms/MB; the stage body's own cost {extra:.3f} CPU s "
        f"({min(bare) / min(body):.2f}x the bare encoder's rate)"
    )
    profile = cProfile.Profile(time.process_time)
    stage_body(blob, parts, eod, profile, dtype)
    pstats.Stats(profile).sort_stats("tottime").print_stats(12)
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
