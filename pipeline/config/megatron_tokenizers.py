"""The ``unique_identifiers`` of the tokenizer megatron-core 0.16.1 builds for a tokenizer kind
(docs/training_indices.md, Tokenizer identifiers): what ``training.tokenizer`` is when left out.

Megatron-LM's ``build_tokenizer`` calls ``MegatronTokenizer.from_pretrained(path, metadata_path={"library": L},
**kwargs)``, which builds ``DefaultTokenizerText``; its identifiers are the class, the path and each keyword
argument as a string, in order. The keyword arguments are the ones Megatron-LM passes for the ``--tokenizer-type``
of the kind with its other flags at their defaults.
"""

from __future__ import annotations

import posixpath
from typing import Any

MEGATRON_CLASS = "megatron.core.tokenizers.text.models.default_tokenizer.DefaultTokenizerText"
# per kind: megatron-core's library name, Megatron-LM's --tokenizer-type, its keyword arguments at their defaults
MEGATRON_TOKENIZERS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "tiktoken": ("tiktoken", "TikTokenizer", {"num_special_tokens": 1000, "special_tokens": None}),
    "sentencepiece": ("sentencepiece", "GPTSentencePieceTokenizer", {"legacy": False, "special_tokens": None}),
    "huggingface": (
        "huggingface",
        "HuggingFaceTokenizer",
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


def megatron_tokenizer_path(kind: str, path: str) -> str:
    """``--tokenizer-model`` for a kind: the file itself, or the directory of a ``tokenizer.json`` (Hugging Face
    loads a directory)."""
    return posixpath.dirname(path.rstrip("/")) if kind == "huggingface" else path


def megatron_identifiers(kind: str, path: str) -> dict[str, Any]:
    """``DefaultTokenizerText.unique_identifiers`` of the tokenizer Megatron-LM builds for ``kind`` and ``path``."""
    _, _, kwargs = MEGATRON_TOKENIZERS[kind]
    identifiers: dict[str, Any] = {"class": MEGATRON_CLASS, "tokenizer_path": megatron_tokenizer_path(kind, path)}
    identifiers.update({name: str(value) for name, value in kwargs.items()})
    return identifiers
