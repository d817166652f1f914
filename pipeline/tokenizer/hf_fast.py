"""Our numba encoder for a Hugging Face ``tokenizer.json`` that is a byte-level BPE of the Llama 3 / Qwen family
(docs/tokenizer.md, Kinds, Fast path): ids identical to ``tokenizers.Tokenizer.encode(text,
add_special_tokens=False).ids``.

Covered: model BPE (no dropout, no subword prefix or suffix, all 256 byte symbols in the vocabulary), normalizer
none or NFC, pre-tokenizer ``Sequence[Split(Regex(<llama3 | qwen2 | qwen3.5 pattern>), isolated), ByteLevel(no
prefix space, no regex)]``, no truncation or padding. ``tokenizers`` merges, in a pre-token, the pair of lowest merge
index (leftmost first), as :mod:`pipeline.tokenizer.rank_fast`'s kernel does with the merge index as the rank; with
``ignore_merges`` a pre-token that is a vocabulary entry is that entry. The pattern's code-point classes are read
from ``tokenizers``' own regex engine. A document the kernel cannot vouch for goes to the library: one that holds
an added token's text or a code point this Python's Unicode does not assign; one with a code point that NFC could
change is normalized by the library's normalizer first.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cached_property
from typing import Any

import numpy as np

from pipeline.tokenizer import patterns
from pipeline.tokenizer.encode import WordCache, _bpe_numba
from pipeline.tokenizer.rank_fast import FAST_PATTERNS, RankFileBPE, _runs, _unruns

# Split patterns of tokenizer.json with a fast path: tokenizers' regex engine reads ``$`` as the end of any line, so
# cl100k's ``\s++$`` is left to the library
HF_PATTERNS = {p: FAST_PATTERNS[p] for p in (patterns.LLAMA3, patterns.QWEN2, patterns.QWEN35)}
_CLASSES = ((1, r"\p{L}"), (2, r"\p{N}"), (3, r"\s"), (4, r"\p{M}"))
_TABLES: dict[str, np.ndarray] = {}


def _assigned() -> str:
    """Every code point this Python's Unicode assigns (no surrogate, private use or unassigned one)."""
    return "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) not in ("Cn", "Co", "Cs"))


def tokenizers_classes() -> np.ndarray:
    """The class (0 other, 1 ``\\p{L}``, 2 ``\\p{N}``, 3 ``\\s``, 4 ``\\p{M}``) of every assigned code point as
    ``tokenizers``' regex engine sees it (a Split that removes one class keeps the others); the rest are in
    :func:`library_points` and never reach the kernel."""
    if "classes" not in _TABLES:
        import tokenizers

        every = _assigned()
        out = np.zeros(0x110000, dtype=np.uint8)
        for cls, pattern in _CLASSES:
            split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="removed")
            kept = {c for piece, _ in split.pre_tokenize_str(every) for c in piece}
            points = np.fromiter((ord(c) for c in every if c not in kept), dtype=np.int64)
            if out[points].any():
                raise RuntimeError(f"code point classes overlap at {pattern}")
            out[points] = cls
        _TABLES["classes"] = out
    return _TABLES["classes"]


# what a document needs before (or instead of) the kernel: nothing, the library's normalizer, the library
KERNEL, NORMALIZE, LIBRARY = 0, 1, 2


def library_points(nfc: bool) -> np.ndarray:
    """Per code point, what a document holding it needs: LIBRARY when this Python's Unicode does not assign it
    (another Unicode may class it otherwise); under NFC, NORMALIZE when NFC may change it in some text (a
    combining class, a character NFC rewrites, or one that composes with the character before it)."""
    key = f"library-{nfc}"
    if key not in _TABLES:
        out = np.full(0x110000, LIBRARY, dtype=np.uint8)
        every = _assigned()
        out[np.fromiter(map(ord, every), dtype=np.int64, count=len(every))] = KERNEL
        if nfc:
            seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))  # Hangul V and T jamo compose
            for c in every:
                decomposition = unicodedata.decomposition(c).split()
                if len(decomposition) == 2 and not decomposition[0].startswith("<"):
                    seconds.add(int(decomposition[1], 16))
                if unicodedata.combining(c) or unicodedata.normalize("NFC", c) != c:
                    out[ord(c)] = NORMALIZE
            out[list(seconds)] = NORMALIZE
        if out[:128].any():
            raise RuntimeError("an ASCII code point would need the library")
        _TABLES[key] = out
    return _TABLES[key]


def _bytes_to_unicode() -> dict[str, int]:
    """ByteLevel's alphabet: the character standing for each byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = {b: b for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = 256 + extra
            extra += 1
    return {chr(c): b for b, c in chars.items()}


def fast_spec(config: dict[str, Any]) -> tuple[tuple[bool, int, bool, bool], bool] | None:
    """(kernel split, NFC) when the parsed ``tokenizer.json`` is one the kernel reproduces, else None."""
    model = config.get("model") or {}
    if config.get("truncation") is not None or config.get("padding") is not None:
        return None
    if model.get("type") != "BPE" or model.get("dropout") not in (None, 0.0):
        return None
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        return None
    normalizer = config.get("normalizer")
    if normalizer is not None and normalizer != {"type": "NFC"}:
        return None
    pre = config.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers") if pre.get("type") == "Sequence" else None
    if not steps or len(steps) != 2:
        return None
    split, level = steps
    if split.get("type") != "Split" or split.get("behavior") != "Isolated" or split.get("invert"):
        return None
    regex = (split.get("pattern") or {}).get("Regex")
    if regex not in HF_PATTERNS:
        return None
    if level.get("type") != "ByteLevel" or level.get("add_prefix_space") or level.get("use_regex", True):
        return None
    return HF_PATTERNS[regex], normalizer is not None


class TokenizerJsonBPE:
    """A covered ``tokenizer.json``'s kernel tables and the texts that send a document to the library."""

    def __init__(self, config: dict[str, Any], split: tuple[bool, int, bool, bool], nfc: bool) -> None:
        model = config["model"]
        vocab: dict[str, int] = model["vocab"]
        alphabet = _bytes_to_unicode()
        to_bytes: dict[str, bytes] = {}
        for token in vocab:
            if all(c in alphabet for c in token):
                to_bytes[token] = bytes(alphabet[c] for c in token)
        by_byte = {b: t for t, b in alphabet.items()}
        if any(by_byte[b] not in vocab for b in range(256)):
            raise ValueError("the vocabulary lacks a byte symbol")
        byte_ids = np.array([vocab[by_byte[b]] for b in range(256)], dtype=np.int32)
        last: dict[tuple[int, int], tuple[int, int]] = {}  # tokenizers keeps the last of duplicate merges
        for rank, merge in enumerate(model["merges"]):
            a, b = merge.split(" ", 1) if isinstance(merge, str) else merge
            last[(vocab[a], vocab[b])] = (rank, vocab[a + b])
        merges = (
            [p[0] for p in last],
            [p[1] for p in last],
            [v[0] for v in last.values()],
            [v[1] for v in last.values()],
        )
        whole = [(to_bytes[t], i) for t, i in vocab.items() if t in to_bytes] if model.get("ignore_merges") else []
        self.bpe = RankFileBPE.from_merges(split, byte_ids, merges, whole, tokenizers_classes())
        self._library_runs = _runs(library_points(nfc))
        tokens = [t for t in config.get("added_tokens") or [] if t["content"]]
        added = sorted({str(t["content"]).encode("utf-8") for t in tokens})
        plain = all(not any(t.get(k) for k in ("single_word", "lstrip", "rstrip", "normalized")) for t in tokens)
        # tokenizers cuts such tokens out of the raw text first, leftmost and longest, and the pieces between are
        # normalized and encoded on their own; other added tokens leave a document holding them to the library
        self.added_split = (
            re.compile("|".join(re.escape(c) for c in sorted({t["content"] for t in tokens}, key=len, reverse=True)))
            if plain and tokens
            else None
        )
        self._added_ids = {str(t["content"]): int(t["id"]) for t in tokens}
        self._added = (
            np.frombuffer(b"".join(added), dtype=np.uint8).copy(),
            np.concatenate([[0], np.cumsum([len(t) for t in added])]).astype(np.int64),
        )

    def split_added(self, text: str) -> list[str | int]:
        """``text`` as tokenizers cuts it at added tokens: the texts between (maybe empty) and the tokens' ids."""
        assert self.added_split is not None
        plan: list[str | int] = []
        at = 0
        for match in self.added_split.finditer(text):
            plan += [text[at : match.start()], self._added_ids[match.group()]]
            at = match.end()
        plan.append(text[at:])
        return plan

    @classmethod
    def from_json(cls, text: str) -> TokenizerJsonBPE | None:
        """The fast path of a ``tokenizer.json``'s text, or None when the kernel does not reproduce it."""
        config = json.loads(text)
        spec = fast_spec(config)
        if spec is None:
            return None
        try:
            return cls(config, *spec)
        except (KeyError, ValueError, TypeError):  # a merge of tokens the vocabulary lacks, a missing byte
            return None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("library_table", None)
        state.pop("normalizer", None)
        return state

    @cached_property
    def normalizer(self) -> Any:
        """``tokenizers``' own NFC normalizer (the only one :func:`fast_spec` takes), without building the whole
        tokenizer from its file."""
        import tokenizers

        return tokenizers.normalizers.NFC()

    @cached_property
    def library_table(self) -> np.ndarray:
        """:func:`library_points`, rebuilt from its runs where it is unpickled."""
        return _unruns(*self._library_runs, 0x110000)

    def library_documents(self, data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Per text ``data[offsets[i]:offsets[i+1]]``: KERNEL, NORMALIZE (by the library's normalizer, then the
        kernel) or LIBRARY (an added token's text, a code point this Python's Unicode does not assign)."""
        found: np.ndarray = _bpe_numba().library_documents(data, offsets, self.library_table, *self._added)
        return found

    def encode_utf8(
        self, data: np.ndarray, offsets: np.ndarray, cache: WordCache, append_id: int = -1
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The kernel's (ids, ends) of every text, and what each text needs (:meth:`library_documents`)."""
        ids, ends = self.bpe.encode_utf8(data, offsets, cache, append_id)
        return ids, ends, self.library_documents(data, offsets)
