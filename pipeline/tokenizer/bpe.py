"""The byte-level BPE tokenizer: train, load/save GPT-2 style files, encode and decode.

Id layout of a tokenizer trained here (GPT-2's convention): ids 0..255 are the single bytes in
byte order, 256 + k is the token created by merge k, and the special tokens follow the last merge
in the order given (so ``<|endoftext|>`` is ``vocab_size - 1`` when it is the only one). A tokenizer
loaded from files keeps the ids of vocab.json; special tokens missing there get the next free ids.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import IO, Any, cast

import numpy as np

from pipeline.tokenizer.encode import (
    NumbaBPE,
    PretokenCache,
    WordCache,
    bpe_ids,
    build_merge_table,
    numba_enabled,
    scrub_surrogates,
)
from pipeline.tokenizer.files import (
    read_vocab_merges,
    write_merges_txt,
    write_tiktoken_ranks,
    write_tokenizer_json,
    write_vocab_json,
)
from pipeline.tokenizer.patterns import NAMED_PATTERNS
from pipeline.tokenizer.pretokenize import SpecialSplitter, count_pretokens, pretoken_regex, stream_pieces
from pipeline.tokenizer.rank_fast import fast_split
from pipeline.tokenizer.train import train_merges

_UNPICKLED: dict[tuple[bytes, bool], BPETokenizer] = {}  # (content blob, numba) -> the last tokenizer unpickled here
TIKTOKEN_FILE = "tokenizer.tiktoken"


def _check_pattern(pattern: str | None) -> None:
    if pattern is not None and pattern not in NAMED_PATTERNS:
        raise ValueError(f"pattern {pattern!r} is not one of {', '.join(NAMED_PATTERNS)}")


class BPETokenizer:
    """Byte-level BPE with GPT-2 pre-tokenization (or a named pattern's) and special tokens (docs/tokenizer.md).

    ``pattern``: ``None`` is GPT-2's pattern and today's files; a name of :data:`NAMED_PATTERNS`
    (``tokenizer.pattern``) pre-tokenizes with that pattern and :meth:`save` adds a tiktoken rank file.

    Pickles as (vocab, merges, special tokens, pattern) only, in one blob; lookup tables and the per-pre-token
    encode cache are rebuilt on the receiving side (e.g. a Spark executor), or shared with an equal
    tokenizer unpickled there before.
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Sequence[str] | Mapping[str, int] = (),
        cache_size: int = 1 << 16,
        pattern: str | None = None,
    ) -> None:
        _check_pattern(pattern)
        self.pattern = pattern
        self.vocab: dict[int, bytes] = dict(vocab)
        self.merges: list[tuple[bytes, bytes]] = list(merges)
        self.cache_size = cache_size
        if isinstance(special_tokens, Mapping):
            self.special_ids: dict[str, int] = dict(special_tokens)
        else:
            by_bytes = {v: k for k, v in self.vocab.items()}
            self.special_ids = {}
            for text in dict.fromkeys(special_tokens):
                idx = by_bytes.get(text.encode("utf-8"))
                if idx is None:
                    idx = max(self.vocab, default=-1) + 1
                    self.vocab[idx] = text.encode("utf-8")
                self.special_ids[text] = idx
        for text, idx in self.special_ids.items():
            if self.vocab.get(idx) != text.encode("utf-8"):
                raise ValueError(f"special token {text!r} id {idx} does not hold its bytes in the vocab")
        self._build()

    # ----------------------------------------------------------------- construction
    def _build(self) -> None:
        special = set(self.special_ids.values())
        self._token_ids: dict[bytes, int] = {}
        for idx in sorted(self.vocab):
            if idx not in special:
                self._token_ids.setdefault(self.vocab[idx], idx)
        missing = [b for b in range(256) if bytes([b]) not in self._token_ids]
        if missing:
            raise ValueError(f"vocabulary lacks {len(missing)} single bytes, e.g. {bytes([missing[0]])!r}")
        self._byte_ids = [self._token_ids[bytes([b])] for b in range(256)]
        self._table = build_merge_table(self.merges, self._token_ids)
        self._splitter = SpecialSplitter(list(self.special_ids))
        # GPT-2's pattern (unset or named) is what the numba kernel pre-tokenizes; the others run the regex
        self._split_pattern = None if self.pattern in (None, "gpt2") else self.pattern
        self._pretoken_re = pretoken_regex(self._split_pattern)
        split = None if self._split_pattern is None else fast_split(NAMED_PATTERNS[self._split_pattern])
        compiled = numba_enabled() and (self._split_pattern is None or split is not None)
        self._numba = NumbaBPE(self._table, self._byte_ids, split) if compiled else None
        self._cache = self._new_cache(self.cache_size)

    def __getstate__(self) -> dict[str, Any]:
        """The content as one pickled blob (so a receiver holding an equal tokenizer need not decode it)."""
        content = pickle.dumps(
            (self.vocab, self.merges, self.special_ids, self.pattern), protocol=pickle.HIGHEST_PROTOCOL
        )
        return {"content": content, "cache_size": self.cache_size}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuild the derived tables, or share those (and the decoded vocab and merges) of the tokenizer
        with the same content blob unpickled last in this process: a reused Spark Python worker receives
        a new broadcast of the same tokenizer every run and then only compares the blob's bytes
        instead of decoding the tokens and merges again. The pre-token cache is
        always new (its size is not part of the content)."""
        content, self.cache_size = state["content"], state["cache_size"]
        key = (content, numba_enabled())
        twin = _UNPICKLED.get(key)
        if twin is not None:
            shared = ("vocab", "merges", "special_ids", "pattern", "_token_ids", "_byte_ids", "_table", "_splitter")
            for name in (*shared, "_split_pattern", "_pretoken_re", "_numba"):
                setattr(self, name, getattr(twin, name))
            self._cache = self._new_cache(self.cache_size)
            return
        self.vocab, self.merges, self.special_ids, self.pattern = pickle.loads(content)
        self._build()
        _UNPICKLED.clear()  # keep one: bounded memory
        _UNPICKLED[key] = self

    @classmethod
    def train_from_counts(
        cls,
        counts: Mapping[bytes, int],
        vocab_size: int,
        special_tokens: Sequence[str] = (),
        progress: bool | None = False,
        pattern: str | None = None,
    ) -> BPETokenizer:
        """Learn merges from pre-token byte counts (see :func:`count_pretokens`, counted with ``pattern``) up to
        ``vocab_size``."""
        specials = list(dict.fromkeys(special_tokens))
        num_merges = vocab_size - 256 - len(specials)
        if num_merges < 0:
            raise ValueError(f"vocab_size {vocab_size} < 256 bytes + {len(specials)} special tokens")
        merges = train_merges(counts, num_merges, progress=progress)
        vocab = {i: bytes([i]) for i in range(256)}
        for a, b in merges:
            vocab[len(vocab)] = a + b
        special_ids = {}
        for text in specials:
            special_ids[text] = len(vocab)
            vocab[len(vocab)] = text.encode("utf-8")
        return cls(vocab, merges, special_ids, pattern=pattern)

    @classmethod
    def train(
        cls,
        input_path: str | os.PathLike[str],
        vocab_size: int,
        special_tokens: Sequence[str] = (),
        progress: bool | None = False,
        pattern: str | None = None,
    ) -> BPETokenizer:
        """Train on a UTF-8 text file (streamed): count pre-tokens with ``pattern`` (GPT-2's when ``None``), then
        :meth:`train_from_counts`."""
        _check_pattern(pattern)
        splitter = SpecialSplitter(special_tokens)
        split = None if pattern == "gpt2" else pattern
        with open(input_path, encoding="utf-8", errors="replace") as f:
            pieces = stream_pieces(f, splitter, chunk_chars=1 << 20, pattern=split)
            counts = count_pretokens(pieces, special_tokens, split)
        return cls.train_from_counts(counts, vocab_size, special_tokens, progress=progress, pattern=pattern)

    @classmethod
    def from_files(
        cls,
        vocab_path: str | os.PathLike[str],
        merges_path: str | os.PathLike[str],
        special_tokens: Sequence[str] = (),
        cache_size: int = 1 << 16,
        pattern: str | None = None,
    ) -> BPETokenizer:
        """Load GPT-2 style vocab.json + merges.txt (pre-tokenized with ``pattern``, GPT-2's when ``None``)."""
        vocab, merges, special_ids = read_vocab_merges(vocab_path, merges_path, special_tokens)
        return cls(vocab, merges, special_ids, cache_size=cache_size, pattern=pattern)

    def files(self) -> tuple[str, ...]:
        """Names of the files :meth:`save` writes: vocab.json, merges.txt, tokenizer.json, and with a pattern
        the tiktoken rank file."""
        base = ("vocab.json", "merges.txt", "tokenizer.json")
        return base if self.pattern is None else (*base, TIKTOKEN_FILE)

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write vocab.json, merges.txt and a Hugging Face tokenizer.json into ``directory``; with a pattern also
        ``tokenizer.tiktoken`` (ranks = ids), and the tokenizer.json splits with that pattern."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        write_vocab_json(out / "vocab.json", self.vocab, self.special_ids)
        write_merges_txt(out / "merges.txt", self.merges)
        split = None if self._split_pattern is None else NAMED_PATTERNS[self._split_pattern]
        write_tokenizer_json(out / "tokenizer.json", self.vocab, self.merges, self.special_ids, split)
        if self.pattern is not None:
            write_tiktoken_ranks(out / TIKTOKEN_FILE, self.vocab, self.special_ids)

    # ----------------------------------------------------------------- lookups
    @property
    def special_tokens(self) -> list[str]:
        return list(self.special_ids)

    @property
    def vocab_size(self) -> int:
        """One more than the largest id (the size an embedding table needs)."""
        return max(self.vocab, default=-1) + 1

    def __len__(self) -> int:
        return len(self.vocab)

    def token_id(self, token: bytes | str) -> int:
        """Id of a special token (str) or of a token given by its bytes or text; KeyError if absent."""
        if isinstance(token, str):
            if token in self.special_ids:
                return self.special_ids[token]
            token = token.encode("utf-8")
        if token in self._token_ids:
            return self._token_ids[token]
        for text, idx in self.special_ids.items():
            if text.encode("utf-8") == token:
                return idx
        raise KeyError(token)

    def python_path(self) -> BPETokenizer:
        """This tokenizer on the pure-Python encoder (same tables, same ids, a pre-token cache of its own), for
        inputs too small to be worth loading the numba kernels (:meth:`pipeline.numba_backend.NumbaSwitch.use`);
        made once. Itself when it has no numba encoder."""
        if self._numba is None:
            return self
        twin: BPETokenizer | None = self.__dict__.get("_python_twin")
        if twin is None:
            twin = object.__new__(BPETokenizer)
            twin.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_python_twin"})
            twin._numba = None
            twin._cache = twin._new_cache(self.cache_size)
            self._python_twin = twin
        return twin

    # ----------------------------------------------------------------- encoding
    def _encode_pretoken(self, piece: str) -> list[int]:
        return bpe_ids(piece.encode("utf-8"), self._byte_ids, self._table)

    def _new_cache(self, max_entries: int) -> WordCache | PretokenCache:
        if self._numba is not None:
            return WordCache(max_entries)
        return PretokenCache(self._encode_pretoken, max_entries)

    def _ordinary(self, text: str, cache: WordCache | PretokenCache) -> list[int]:
        """Ids of text without special-token handling, with the given pre-token cache."""
        if self._numba is not None:
            ids: list[int] = self._numba.encode((text,), cast(WordCache, cache))[0].tolist()
            return ids
        words = cast(PretokenCache, cache)
        try:
            return list(chain.from_iterable([words[w] for w in self._pretoken_re.findall(text)]))
        except UnicodeEncodeError:  # surrogates: resolved as tiktoken does
            return self._ordinary(scrub_surrogates(text), cache)

    def _encode(self, text: str, split_special: bool, cache: WordCache | PretokenCache) -> list[int]:
        if not split_special or not self.special_ids:
            return self._ordinary(text, cache)
        pieces = list(self._splitter.split(text))
        if self._numba is not None and len(pieces) > 1:  # one kernel call for all ordinary pieces
            ordinary = [piece for piece, special in pieces if not special]
            if ordinary:
                flat, ends = self._numba.encode(ordinary, cast(WordCache, cache))
                ids, bounds = flat.tolist(), [0, *ends.tolist()]
            out: list[int] = []
            k = 0
            for piece, special in pieces:
                if special:
                    out.append(self.special_ids[piece])
                else:
                    out.extend(ids[bounds[k] : bounds[k + 1]])
                    k += 1
            return out
        out = []
        for piece, special in pieces:
            if special:
                out.append(self.special_ids[piece])
            else:
                out.extend(self._ordinary(piece, cache))
        return out

    def encode(self, text: str, *, split_special: bool = True) -> list[int]:
        """Token ids of ``text``. With ``split_special=False`` special-token strings are plain text.

        Surrogate code points are resolved first as tiktoken does (a UTF-16 pair becomes its
        character, a lone surrogate U+FFFD)."""
        return self._encode(text, split_special, self._cache)

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        """Encode several texts (one list of ids per text)."""
        return [self.encode(t) for t in texts]

    def encode_ordinary_batch(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Ids of several texts, special-token strings as plain text: (all ids as int32, end of each
        text's ids). One kernel call for the whole batch when numba is in use."""
        if self._numba is None:
            parts = [self._ordinary(t, self._cache) for t in texts]
            return _flatten(parts)
        if not texts:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
        return self._numba.encode(texts, cast(WordCache, self._cache))

    def encode_utf8_batch(
        self, data: np.ndarray, offsets: np.ndarray, append_id: int = -1
    ) -> tuple[np.ndarray, np.ndarray]:
        """Ids of the texts ``data[offsets[i]:offsets[i+1]]`` (uint8 array of valid UTF-8, e.g. an
        Arrow string column's data buffer; int64 offsets), special-token strings as plain text.

        Returns (all ids as int32, end of each text's ids); ``append_id >= 0`` follows every text's
        ids (the end-of-document id in the tokenize stage). No Python string is made on the numba path.
        """
        offsets = np.asarray(offsets, dtype=np.int64)
        if offsets.size < 2:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
        if self._numba is not None:
            return self._numba.encode_utf8(
                np.asarray(data, dtype=np.uint8), offsets, cast(WordCache, self._cache), append_id
            )
        raw = np.asarray(data, dtype=np.uint8).tobytes()
        tail = [append_id] if append_id >= 0 else []
        parts = [
            self._ordinary(raw[a:b].decode("utf-8"), self._cache) + tail
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
        ]
        return _flatten(parts)

    def encode_iterable(
        self, file_obj: IO[str] | Iterable[str], chunk_chars: int = 1 << 13, cache_entries: int = 2048
    ) -> Iterator[int]:
        """Lazily encode a text stream in bounded memory; equals ``encode`` of the whole text.

        The stream is cut only where pre-tokens and special tokens cannot span the cut (see
        :func:`stream_pieces`), except inside a whitespace-free run of several million characters.
        Uses its own pre-token cache of ``cache_entries`` (about 90 bytes each), not the tokenizer's.
        """
        cache = self._new_cache(cache_entries)
        for piece in stream_pieces(file_obj, self._splitter, chunk_chars=chunk_chars, pattern=self._split_pattern):
            yield from self._encode(piece, True, cache)

    # ----------------------------------------------------------------- decoding
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenated bytes of the tokens."""
        vocab = self.vocab
        return b"".join([vocab[i] for i in ids])

    def decode(self, ids: Iterable[int]) -> str:
        """Text of the tokens; invalid UTF-8 becomes U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")


def _flatten(parts: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(concatenated ids as int32, end of each part) of lists of ids."""
    ends = np.cumsum([len(p) for p in parts], dtype=np.int64)
    total = int(ends[-1]) if parts else 0
    return np.fromiter(chain.from_iterable(parts), dtype=np.int32, count=total), ends
