"""Benchmark: the tokenize stage on ``local[2]`` vs tiktoken in one process, same text, same vocabulary.

    python bench/bench_tokenize.py                 # ~20 MB of text, 4 partitions
    python bench/bench_tokenize.py --mb 100 --partitions 8

The vocabulary is GPT-2's (``/work/shared/fixtures`` or ``--fixtures``); without those files a
tokenizer is trained on the first documents and handed to tiktoken as ranks. Identical ids are
asserted on a sample first. The stage's rate is text bytes over the wall time of ``run_tokenize``
(Spark session already up; best of ``--repeat`` runs; the first includes Python worker start-up).
tiktoken's rate is ``encode_ordinary`` over every document in this process, one thread. Target:
stage on 2 cores >= 0.8x tiktoken on 1. Merge throughput is measured by ``bench_merge.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import jsonl_of_size  # noqa: E402

from pipeline.config import load_config_text  # noqa: E402
from pipeline.context import RunContext  # noqa: E402
from pipeline.megatron.tokenize_stage import run_tokenize  # noqa: E402
from pipeline.tokenizer import GPT2_PATTERN, BPETokenizer, count_pretokens  # noqa: E402

EOT = "<|endoftext|>"
FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


def load_texts(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def tokenizer_and_oracle(fixtures: Path, texts: list[str], tok_dir: Path):
    """(our tokenizer, tiktoken Encoding with the same ranks, vocab.json path, merges.txt path)."""
    import tiktoken

    if (fixtures / "gpt2_vocab.json").is_file():
        vocab, merges = fixtures / "gpt2_vocab.json", fixtures / "gpt2_merges.txt"
        tok = BPETokenizer.from_files(vocab, merges, [EOT])
    else:
        print(f"no GPT-2 files in {fixtures}: training an 8000-id tokenizer on the first documents")
        tok = BPETokenizer.train_from_counts(count_pretokens(texts[:2000], [EOT]), 8000, [EOT])
        tok.save(tok_dir)
        vocab, merges = tok_dir / "vocab.json", tok_dir / "merges.txt"
    specials = {EOT: tok.token_id(EOT)}
    ranks = {b: i for i, b in tok.vocab.items() if i not in specials.values()}
    enc = tiktoken.Encoding(name="bench", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens=specials)
    return tok, enc, vocab, merges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=20, help="megabytes of text (default 20)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-tokenize")
    args = parser.parse_args()

    corpus = jsonl_of_size(args.dir / f"corpus-{args.mb:g}mb.jsonl", args.mb)
    texts = load_texts(corpus)
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    mb = nbytes / 1e6
    print(f"corpus: {len(texts):,} documents, {mb:.1f} MB of text ({corpus})")
    with tempfile.TemporaryDirectory(dir=args.dir) as work:
        work_dir = Path(work)
        tok, enc, vocab, merges = tokenizer_and_oracle(args.fixtures, texts, work_dir)
        sample = texts[:: max(1, len(texts) // 300)]
        assert [tok.encode(t, split_special=False) for t in sample] == [enc.encode_ordinary(t) for t in sample]
        print(f"ids identical to tiktoken on {len(sample)} sampled documents (vocab {tok.vocab_size})")

        started, cpu = time.perf_counter(), time.process_time()
        for t in texts:
            enc.encode_ordinary(t)
        tiktoken_rate = mb / (time.perf_counter() - started)
        tiktoken_cpu = mb / (time.process_time() - cpu)
        print(f"tiktoken, 1 process:          {tiktoken_rate:7.2f} MB/s ({tiktoken_cpu:.2f} MB/s CPU time)")
        cpu = time.process_time()
        for start in range(0, len(texts), 10_000):  # the stage's call: one per Arrow batch
            tok.encode_ordinary_batch(texts[start:start + 10_000])
        ours_cpu = mb / (time.process_time() - cpu)
        print(f"ours in process, 1 thread:    {ours_cpu:7.2f} MB/s CPU time = {ours_cpu / tiktoken_cpu:.2f}x tiktoken")

        run = work_dir / "run"
        survivors = run / "dedup" / "survivors"
        survivors.mkdir(parents=True)
        pq.write_table(pa.table({"doc_id": pa.array(range(len(texts)), pa.int64()),
                                 "source": ["web"] * len(texts), "text": texts}),
                       survivors / "part-00000.parquet", row_group_size=2048)
        config = load_config_text(
            f'output: {run}\ntokenizer: {{vocab: "{vocab}", merges: "{merges}"}}\n'
            f"tokenize: {{partitions: {args.partitions}}}\n"
            f'spark: {{master: "{args.master}", log_level: ERROR, '
            f'settings: {{spark.ui.showConsoleProgress: "false"}}}}\n'
            f'sources:\n  - {{name: web, paths: ["{run}/raw"]}}\n')
        ctx = RunContext(config)
        ctx.spark  # start the JVM outside the timed region  # noqa: B018
        rates = []
        for i in range(args.repeat):
            started = time.perf_counter()
            counts = run_tokenize(ctx)
            seconds = time.perf_counter() - started
            rates.append(mb / seconds)
            web = counts["sources"]["web"]
            print(f"tokenize stage, {args.master}, run {i + 1}: {rates[-1]:7.2f} MB/s "
                  f"({seconds:.1f} s, {web['documents']:,} documents, {web['tokens']:,} tokens, "
                  f"{web['shards']} shards)")
        ctx.spark.stop()
    ratio = max(rates) / tiktoken_rate
    verdict = "meets" if ratio >= 0.8 else "misses"
    print(f"best stage rate / tiktoken rate = {ratio:.2f} ({verdict} the 0.8x target)")
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs: rates are only comparable on an otherwise idle machine")


if __name__ == "__main__":
    main()
