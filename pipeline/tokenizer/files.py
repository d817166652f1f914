"""GPT-2 style tokenizer files: the bytes-to-unicode table, vocab.json, merges.txt, HF tokenizer.json.

GPT-2 stores every token as a printable string: each byte is mapped to one unicode character by
``bytes_to_unicode()`` (printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100..).
Special tokens are stored verbatim (their text, not mapped), as GPT-2's ``<|endoftext|>`` is.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

MERGES_HEADER = "#version: 0.2"


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character table (256 entries)."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    table: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    """Inverse of :func:`bytes_to_unicode`."""
    return {c: b for b, c in bytes_to_unicode().items()}


def token_to_str(token: bytes) -> str:
    """Render token bytes as GPT-2's printable string."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


@lru_cache(maxsize=1)
def _to_latin1() -> dict[int, int]:
    """``str.translate`` table of :func:`str_to_token`: each of GPT-2's characters -> the code point of its byte,
    every other code point below 256 -> U+FFFF, so that a character outside the table fails the Latin-1 encode."""
    table = {ord(c): b for c, b in unicode_to_bytes().items()}
    for point in range(256):
        table.setdefault(point, 0xFFFF)
    return table


def str_to_token(text: str) -> bytes:
    """Inverse of :func:`token_to_str`; raises KeyError (naming the first) for characters outside the table.

    One ``str.translate`` and one Latin-1 encode in C per token: loading GPT-2's 50,000 tokens and 50,000 merges
    is on the driver's path of every tokenize run."""
    try:
        return text.translate(_to_latin1()).encode("latin-1")
    except UnicodeEncodeError:
        table = unicode_to_bytes()
        raise KeyError(next(c for c in text if c not in table)) from None


def read_vocab_merges(
    vocab_path: str | os.PathLike[str], merges_path: str | os.PathLike[str], special_tokens: Sequence[str] = ()
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]], dict[str, int]]:
    """Read GPT-2 style files -> (vocab id->bytes, merges in order, special token -> id).

    A special token found verbatim in vocab.json keeps its id; a missing one gets the next free id.
    """
    with open(vocab_path, encoding="utf-8") as f:
        encoder: dict[str, int] = json.load(f)
    return vocab_merges_from(encoder, merges_path, special_tokens)


def vocab_merges_from(
    encoder: Mapping[str, int], merges_path: str | os.PathLike[str], special_tokens: Sequence[str] = ()
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]], dict[str, int]]:
    """:func:`read_vocab_merges` with vocab.json already parsed into ``encoder`` (string -> id)."""
    specials: dict[str, int] = {}
    vocab: dict[int, bytes] = {}
    wanted = set(special_tokens)
    for text, idx in encoder.items():
        if text in wanted:
            specials[text] = idx
            vocab[idx] = text.encode("utf-8")
            continue
        try:
            vocab[idx] = str_to_token(text)
        except KeyError:  # e.g. an added token stored verbatim by another tool
            vocab[idx] = text.encode("utf-8")
    next_id = max(vocab, default=-1) + 1
    for text in special_tokens:
        if text not in specials:
            specials[text] = next_id
            vocab[next_id] = text.encode("utf-8")
            next_id += 1
    merges: list[tuple[bytes, bytes]] = []
    with open(merges_path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line or line.startswith("#version"):
                continue
            left, right = line.split(" ")
            merges.append((str_to_token(left), str_to_token(right)))
    return vocab, merges, specials


def write_vocab_json(path: str | os.PathLike[str], vocab: Mapping[int, bytes], special_ids: Mapping[str, int]) -> None:
    """Write vocab.json (string -> id, ordered by id); special tokens verbatim."""
    special_by_id = {i: s for s, i in special_ids.items()}
    encoder = {(special_by_id[i] if i in special_by_id else token_to_str(vocab[i])): i for i in sorted(vocab)}
    Path(path).write_text(json.dumps(encoder, ensure_ascii=False), encoding="utf-8")


def write_merges_txt(path: str | os.PathLike[str], merges: Sequence[tuple[bytes, bytes]]) -> None:
    """Write merges.txt with GPT-2's header line and a trailing newline (Megatron drops both ends)."""
    lines = [MERGES_HEADER] + [f"{token_to_str(a)} {token_to_str(b)}" for a, b in merges]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def oniguruma_regex(pattern: str) -> str:
    """``pattern`` as Hugging Face ``tokenizers`` (Oniguruma) reads it the way tiktoken (fancy-regex) does: Oniguruma
    takes ``{1,3}+`` as ``{1,3}`` then ``+`` (one or more of it), not as possessive; a bounded repeat that ends its
    alternative needs no possessive, so the ``+`` is dropped."""
    return re.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def write_tokenizer_json(
    path: str | os.PathLike[str],
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    special_ids: Mapping[str, int],
    split_regex: str | None = None,
) -> None:
    """Write a Hugging Face ``tokenizers`` tokenizer.json: ByteLevel pre-tokenizer/decoder, BPE model.

    ``split_regex`` (a pattern other than GPT-2's): the pre-tokenizer is a ``Split`` on it (isolated pieces), then
    ByteLevel without its own regex, as Llama 3's and Qwen's tokenizer.json files are."""
    special_by_id = {i: s for s, i in special_ids.items()}
    model_vocab = {token_to_str(vocab[i]): i for i in sorted(vocab) if i not in special_by_id}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    pre_tokenizer: dict[str, object] = byte_level
    if split_regex is not None:
        regex = {"Regex": oniguruma_regex(split_regex)}
        split = {"type": "Split", "pattern": regex, "behavior": "Isolated", "invert": False}
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, {**byte_level, "use_regex": False}]}
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": s,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for i, s in sorted(special_by_id.items())
        ],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": model_vocab,
            "merges": [[token_to_str(a), token_to_str(b)] for a, b in merges],
        },
    }
    Path(path).write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")


def write_tiktoken_ranks(
    path: str | os.PathLike[str], vocab: Mapping[int, bytes], special_ids: Mapping[str, int]
) -> None:
    """Write tiktoken's rank file: ``<base64 token bytes> <rank>`` per line, the rank being the token's id, in id
    order; special tokens are left out (tiktoken takes them apart) and so is a later id of bytes already listed
    (the encoder never produces it)."""
    special = set(special_ids.values())
    seen: set[bytes] = set()
    lines = []
    for i in sorted(vocab):
        token = vocab[i]
        if i in special or token in seen:
            continue
        seen.add(token)
        lines.append(f"{base64.b64encode(token).decode('ascii')} {i}\n")
    Path(path).write_text("".join(lines), encoding="ascii")
