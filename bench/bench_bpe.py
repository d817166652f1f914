"""Benchmark of the BPE kernel: training time, training vs HF tokenizers, encoding vs tiktoken, memory.

    python -m bench bpe [--mb 20] [--encode-mb 5] [--encode-only] [--fixtures ../shared/fixtures]

How it measures: docs/benchmarks.md, Method notes, bpe.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # HF tokenizers: one thread, like the others
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench.harness import best_of, write_result
from pipeline.tokenizer import GPT2_PATTERN, BPETokenizer
from pipeline.tokenizer.files import str_to_token

EOT = "<|endoftext|>"
TEXTS = ["corpus.en", "tinystories_sample.txt", "address.txt", "german.txt"]


def make_corpus(path: Path, fixtures: Path, megabytes: float, seed: int = 0) -> None:
    """Write a synthetic corpus: fixture words, Zipf-weighted, a share of them perturbed, with EOTs."""
    rng = random.Random(seed)
    words = []
    for name in TEXTS:
        words += (fixtures / name).read_text(encoding="utf-8").replace(EOT, " ").split()
    base = sorted(set(words))
    letters = "abcdefghijklmnopqrstuvwxyzäöüéèñ"
    pool = list(base)
    for _ in range(8 * len(base)):  # perturbed variants: insert / replace a letter, add digits
        w = rng.choice(base)
        i = rng.randrange(len(w) + 1)
        kind = rng.random()
        if kind < 0.4:
            w = w[:i] + rng.choice(letters) + w[i:]
        elif kind < 0.8:
            w = w[:i] + rng.choice(letters) + w[i + 1 :]
        else:
            w = w + str(rng.randrange(10_000))
        pool.append(w)
    rng.shuffle(pool)
    weights = [1.0 / (rank + 10) for rank in range(len(pool))]
    cum = list(itertools.accumulate(weights))
    target = int(megabytes * 1_000_000)
    written = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            doc_words = rng.choices(pool, cum_weights=cum, k=rng.randrange(50, 400))
            lines = [" ".join(doc_words[i : i + 12]) for i in range(0, len(doc_words), 12)]
            doc = ".\n".join(lines) + ".\n" + EOT + "\n"
            f.write(doc)
            written += len(doc.encode("utf-8"))


FIGURES: dict[str, tuple[float, str]] = {}  # the result's figures, filled by each part as it runs


def bench_small(fixtures: Path) -> None:
    t, _ = best_of(lambda: BPETokenizer.train(fixtures / "corpus.en", 500, [EOT]), 3, time.perf_counter)
    FIGURES["train corpus.en"] = (t, "s")
    print(
        f"[1] train corpus.en ({(fixtures / 'corpus.en').stat().st_size / 1e3:.0f} kB) vocab 500: "
        f"{t:.3f} s (target < 0.5 s)"
    )


def bench_train_big(corpus: Path, vocab_size: int) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    mb = corpus.stat().st_size / 1e6
    t = time.perf_counter()
    ours = BPETokenizer.train(corpus, vocab_size, [EOT])
    t_ours = time.perf_counter() - t

    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    t = time.perf_counter()
    hf.train([str(corpus)], trainer)
    t_hf = time.perf_counter() - t
    FIGURES["train ours/HF"] = (t_ours / t_hf, "x")
    threads = os.environ.get("RAYON_NUM_THREADS", f"default ({os.cpu_count()} cpus)")
    print(
        f"[2] train {mb:.1f} MB vocab {vocab_size}: ours {t_ours:.1f} s (1 process), "
        f"HF BpeTrainer {t_hf:.1f} s (threads: {threads}); ours/HF = {t_ours / t_hf:.2f}x "
        f"(ours: {len(ours.merges)} merges, HF vocab {hf.get_vocab_size()})"
    )


def gpt2_pair(fixtures: Path):
    import tiktoken

    tok = BPETokenizer.from_files(fixtures / "gpt2_vocab.json", fixtures / "gpt2_merges.txt", [EOT])
    encoder = json.loads((fixtures / "gpt2_vocab.json").read_text(encoding="utf-8"))
    ranks = {str_to_token(s): i for s, i in encoder.items() if s != EOT}
    enc = tiktoken.Encoding(
        name="gpt2-offline", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={EOT: 50256}
    )
    return tok, enc


def code_corpus(megabytes: float) -> str:
    """Python source of installed packages (site-packages of this interpreter, sorted paths), concatenated."""
    import sysconfig

    root = Path(sysconfig.get_paths()["purelib"])
    parts, size = [], 0
    for package in ("pyspark", "numpy", "pandas", "pyarrow"):
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            parts.append(text)
            size += len(text.encode("utf-8"))
            if size >= megabytes * 1e6:
                return "".join(parts)
    return "".join(parts)


def bench_encode_table(fixtures: Path, corpora: dict[str, str], repeat: int) -> None:
    """[3] ours vs tiktoken vs HF tokenizers, GPT-2 vocabulary, one thread, CPU time, best of ``repeat``."""
    from importlib.metadata import version

    from tokenizers import Tokenizer

    from pipeline.tokenizer.encode import numba_enabled

    tok, enc = gpt2_pair(fixtures)
    with tempfile.TemporaryDirectory() as tmp:
        tok.save(tmp)  # HF loads the tokenizer.json we write
        hf = Tokenizer.from_file(str(Path(tmp) / "tokenizer.json"))
    t = time.process_time()
    tok.encode("warm up the kernels: load them from numba's cache (or compile) once")
    t_load = time.process_time() - t
    backend = "numba" if numba_enabled() else "pure Python"
    FIGURES["kernel load"] = (t_load, "s")
    print(
        f"[3] encode, GPT-2 vocab, 1 thread, CPU time (best of {repeat}, HF best of 2); backend {backend}, "
        f"kernel load {t_load:.2f} s; tiktoken {version('tiktoken')}, tokenizers {version('tokenizers')}."
    )
    print("    ours = BPETokenizer.encode(text, split_special=False); tiktoken = encode_ordinary; HF = encode().ids")
    print("    warm = pre-token cache filled by an earlier call; cold = cache cleared before the call")
    head = (
        f"    {'text':<26}{'MB':>6}{'ours warm':>11}{'ours cold':>11}{'tiktoken':>10}{'HF':>8}"
        f"{'warm/tik':>10}{'cold/tik':>10}{'warm/HF':>9}  ids"
    )
    print(head)
    for label, text in corpora.items():
        mb = len(text.encode("utf-8")) / 1e6
        expected = enc.encode_ordinary(text)
        tok._cache.clear()
        assert tok.encode(text, split_special=False) == expected, f"ids differ from tiktoken on {label}"
        same_hf = hf.encode(text, add_special_tokens=False).ids == tok.encode(text)

        def cold(text: str = text) -> None:
            tok._cache.clear()
            tok.encode(text, split_special=False)

        t_cold = best_of(cold, repeat)[0]
        t_warm = best_of(lambda: tok.encode(text, split_special=False), repeat)[0]  # noqa: B023
        t_tik = best_of(lambda: enc.encode_ordinary(text), repeat)[0]  # noqa: B023
        t_hf = best_of(lambda: hf.encode(text, add_special_tokens=False), min(repeat, 2))[0]  # noqa: B023
        FIGURES[f"{label} warm/tiktoken"] = (t_tik / t_warm, "x")
        FIGURES[f"{label} cold/tiktoken"] = (t_tik / t_cold, "x")
        print(
            f"    {label:<26}{mb:6.2f}{mb / t_warm:11.1f}{mb / t_cold:11.1f}{mb / t_tik:10.1f}{mb / t_hf:8.1f}"
            f"{t_tik / t_warm:9.2f}x{t_tik / t_cold:9.2f}x{t_hf / t_warm:8.2f}x  "
            f"= tiktoken{', = HF' if same_hf else ', HF DIFFERS'}"
        )
    print("    MB/s columns are MB of UTF-8 text per CPU second; target: ours >= 1.0x tiktoken (issue 19)")


def bench_memory(fixtures: Path, path: Path) -> None:
    tok, enc = gpt2_pair(fixtures)
    tok.encode("warm up the kernels")

    def stream() -> int:
        with open(path, encoding="utf-8") as f:
            return sum(1 for _ in tok.encode_iterable(f))

    mb = path.stat().st_size / 1e6
    results = []
    for label in ("first call", "second call"):
        tracemalloc.start()
        base, _ = tracemalloc.get_traced_memory()
        n = stream()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        results.append(f"{label} {(peak - base) / 1e6:.2f} MB")
    t_stream = best_of(stream, 2)[0]
    with open(path, encoding="utf-8") as f:
        t_tik = best_of(lambda: sum(1 for _ in enc.encode(f.read(), allowed_special="all")))[0]
    with open(path, encoding="utf-8") as f:
        assert list(tok.encode_iterable(f)) == tok.encode(path.read_text(encoding="utf-8"))
    print(
        f"[4] encode_iterable {mb:.1f} MB file -> {n} ids, peak traced memory above baseline: "
        f"{', '.join(results)} (target < 1 MB; includes encode_iterable's own pre-token cache, 2048 "
        f"entries); {mb / t_stream:.2f} MB/s CPU = {t_tik / t_stream:.2f}x tiktoken encode of the "
        f"whole text; equals encode(whole text)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="size of the generated training corpus")
    parser.add_argument("--vocab", type=int, default=10_000)
    parser.add_argument("--encode-mb", type=float, default=5.0, help="size of the encode/memory file")
    parser.add_argument("--fixtures", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "fixtures")
    parser.add_argument("--encode-only", action="store_true", help="skip the training benchmarks [1], [2]")
    parser.add_argument("--code-mb", type=float, default=4.0, help="size of the Python source corpus")
    parser.add_argument("--times", type=int, default=10, help="repetitions of each fixture text")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many timed calls")
    args = parser.parse_args()
    if not args.encode_only:
        bench_small(args.fixtures)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        if not args.encode_only:
            make_corpus(corpus, args.fixtures, args.mb)
        small = Path(tmp) / "small.txt"
        make_corpus(small, args.fixtures, args.encode_mb, seed=1)
        if not args.encode_only:
            bench_train_big(corpus, args.vocab)
        from bench.corpus import documents

        corpora = {f"{n} x{args.times}": (args.fixtures / n).read_text(encoding="utf-8") * args.times for n in TEXTS}
        corpora[f"code ({args.code_mb:g} MB .py)"] = code_corpus(args.code_mb)
        corpora["generated (make_corpus)"] = small.read_text(encoding="utf-8")
        corpora["bench/corpus.py prose"] = "\n\n".join(itertools.islice(documents(2000, seed=3), 2000))
        bench_encode_table(args.fixtures, corpora, args.repeat)
        bench_memory(args.fixtures, small)
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    write_result("bpe", args, FIGURES)


if __name__ == "__main__":
    main()
