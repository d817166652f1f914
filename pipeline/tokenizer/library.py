"""Tokenizers run by their own library: tiktoken rank files, Hugging Face ``tokenizer.json``, SentencePiece models.

Each is built from the file's bytes (so it pickles small and is rebuilt once per Python worker) and encodes
exactly as the library call named in docs/tokenizer.md, Kinds: special-token text inside a document is
ordinary text, no BOS or EOS is added by the library; the tokenize stage appends the EOD (and prepends the BOS
when ``add_bos``).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipeline.errors import PipelineError
from pipeline.numba_backend import TOKENIZER
from pipeline.tokenizer.encode import WordCache, utf8
from pipeline.tokenizer.hf_fast import LIBRARY, NORMALIZE, TokenizerJsonBPE
from pipeline.tokenizer.rank_fast import RankFileBPE, fast_split
from pipeline.tokenizer.sp_fast import SentencePieceBPE

KINDS = ("tiktoken", "huggingface", "sentencepiece")


class UnknownToken(PipelineError, KeyError):
    """A token text the tokenizer has no single id for."""


def parse_tiktoken_ranks(data: bytes) -> dict[bytes, int]:
    """tiktoken's rank file (one ``<base64 token> <rank>`` per line) as {token bytes: rank}.

    Raises ValueError naming the first bad line."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError("expected '<base64 token> <rank>'")
            ranks[base64.b64decode(parts[0], validate=True)] = int(parts[1])
        except (ValueError, binascii.Error) as exc:
            raise ValueError(f"line {number} is not '<base64 token> <rank>': {exc}") from None
    if not ranks:
        raise ValueError("holds no token")
    return ranks


def _token_bytes(lib: Any, token: int) -> bytes:
    """One token's bytes, or ``<id N>`` for an id the encoding does not hold."""
    try:
        return bytes(lib.decode_single_token_bytes(token))
    except KeyError:
        return f"<id {token}>".encode()


# megatron-core's TikTokenTokenizer: its vocabulary JSON's ranks come after num_special_tokens (1000) specials, the
# first seven named, the rest <SPECIAL_i>, and only the first vocab_size - 1000 ranks (vocab_size 2**17) are kept
MEGATRON_TIKTOKEN_SPECIALS = ("<unk>", "<s>", "</s>", "<mask>", "<pad>", "<cls>", "<sep>")
MEGATRON_TIKTOKEN_NUM_SPECIAL = 1000
MEGATRON_TIKTOKEN_VOCAB = 2**17


def parse_megatron_tiktoken_json(data: bytes) -> tuple[dict[bytes, int], dict[str, int]]:
    """(mergeable ranks, special tokens) of megatron-core's tiktoken vocabulary (a JSON list of ``rank``,
    ``token_bytes``, ``token_str``) with its TikTokenTokenizer's defaults: ids shifted by 1000 specials."""
    rows = json.loads(data)
    if not isinstance(rows, list) or not rows:
        raise ValueError("not a JSON list of {rank, token_bytes, token_str}")
    shift, keep = MEGATRON_TIKTOKEN_NUM_SPECIAL, MEGATRON_TIKTOKEN_VOCAB - MEGATRON_TIKTOKEN_NUM_SPECIAL
    ranks: dict[bytes, int] = {}
    for i, row in enumerate(rows[:keep]):
        if not isinstance(row, dict) or row.get("rank") != i:
            raise ValueError(f"entry {i} is not {{rank: {i}, token_bytes, token_str}}")
        ranks[base64.b64decode(row["token_bytes"])] = i + shift
    names = [*MEGATRON_TIKTOKEN_SPECIALS]
    names += [f"<SPECIAL_{i}>" for i in range(len(names), shift)]
    return ranks, {name: i for i, name in enumerate(names)}


class LibraryTokenizer:
    """One tokenizer file run by its library (``kind``: tiktoken, huggingface or sentencepiece)."""

    def __init__(
        self,
        kind: str,
        model: bytes,
        name: str = "tokenizer",
        pattern: str = "",
        specials: dict[str, int] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown tokenizer kind {kind!r}")
        self.kind, self.model, self.name = kind, model, name
        self.pattern, self.specials = pattern, dict(specials or {})
        self._lib: Any = None
        self._build()
        self.fast = self._fast_path()
        self._cache: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_lib"] = None  # rebuilt from the bytes where it is unpickled
        state["_cache"] = None
        return state

    def _fast_path(self) -> Any:
        """Our numba encoder when numba is on and it reproduces the file: kind tiktoken with a pattern
        :mod:`pipeline.tokenizer.rank_fast` covers, kind huggingface with a ``tokenizer.json``
        :mod:`pipeline.tokenizer.hf_fast` covers, kind sentencepiece with a BPE model :mod:`pipeline.tokenizer.sp_fast`
        covers; else None (the library encodes)."""
        if not TOKENIZER.enabled():
            return None
        if self.kind == "huggingface":
            return TokenizerJsonBPE.from_json(self.model.decode("utf-8"))
        if self.kind == "sentencepiece":
            return SentencePieceBPE.from_model(self.model)
        if self.kind != "tiktoken":
            return None
        split = fast_split(self.pattern)
        if split is None:
            return None
        ranks = self.lib._mergeable_ranks
        try:
            return RankFileBPE(ranks, split)
        except ValueError:  # a rank file without every single byte, ids beyond int32: the library
            return None

    def _word_cache(self) -> Any:
        if self._cache is None:
            self._cache = WordCache(1 << 16)
        return self._cache

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @property
    def lib(self) -> Any:
        """The library's own tokenizer object (built on first use in a worker)."""
        if self._lib is None:
            self._build()
        return self._lib

    def _build(self) -> None:
        if self.kind == "tiktoken":
            import tiktoken

            if self.model.lstrip()[:1] == b"[":  # megatron-core's vocabulary JSON
                ranks, specials = parse_megatron_tiktoken_json(self.model)
                self.specials = {**specials, **self.specials}
            else:
                ranks = parse_tiktoken_ranks(self.model)
            self._lib = tiktoken.Encoding(
                self.name, pat_str=self.pattern, mergeable_ranks=ranks, special_tokens=self.specials
            )
        elif self.kind == "huggingface":
            import tokenizers

            self._lib = tokenizers.Tokenizer.from_str(self.model.decode("utf-8"))
        else:
            import sentencepiece

            self._lib = sentencepiece.SentencePieceProcessor(model_proto=self.model)

    @property
    def vocab_size(self) -> int:
        """Number of ids (largest id + 1 for tiktoken): what the token dtype is chosen from."""
        lib = self.lib
        if self.kind == "tiktoken":
            return int(lib.n_vocab)
        if self.kind == "huggingface":
            return int(lib.get_vocab_size(with_added_tokens=True))
        return int(lib.get_piece_size())

    def token_id(self, token: str) -> int:
        """The id of ``token`` (a special token or one vocabulary entry); raises UnknownToken otherwise."""
        lib = self.lib
        if self.kind == "tiktoken":
            if token in self.specials:
                return self.specials[token]
            try:
                return int(lib.encode_single_token(token.encode("utf-8")))
            except KeyError:
                raise UnknownToken(token) from None
        if self.kind == "huggingface":
            found = lib.token_to_id(token)
            if found is None:
                raise UnknownToken(token)
            return int(found)
        piece = int(lib.piece_to_id(token))
        if piece < 0 or piece >= lib.get_piece_size() or lib.id_to_piece(piece) != token:
            raise UnknownToken(token)
        return piece

    def special_texts(self) -> tuple[str, ...]:
        """Texts of the special tokens a document's text may spell (counted by the tokenize stage): tiktoken's
        configured ones (encoded as plain text) and a tokenizer.json's special added tokens (which its library
        turns into their ids even with ``add_special_tokens=False``); SentencePiece's control symbols never match
        text."""
        if self.kind == "tiktoken":
            return tuple(self.specials)
        if self.kind == "huggingface":
            added = self.lib.get_added_tokens_decoder().values()
            return tuple(str(t.content) for t in added if t.special)
        return ()

    def bos_token(self) -> str | None:
        """The model's own BOS text where the file names one (SentencePiece), else None."""
        if self.kind == "sentencepiece" and self.lib.bos_id() >= 0:
            return str(self.lib.id_to_piece(self.lib.bos_id()))
        return None

    def eos_token(self) -> str | None:
        """The model's own EOS text where the file names one (SentencePiece), else None."""
        if self.kind == "sentencepiece" and self.lib.eos_id() >= 0:
            return str(self.lib.id_to_piece(self.lib.eos_id()))
        return None

    def encode(self, text: str) -> list[int]:
        """Ids of one text, as the library's call in docs/tokenizer.md, Kinds."""
        return self.encode_batch([text])[0]

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Ids of each text (one thread: Spark runs one task per core)."""
        if self.fast is None or not texts:
            return self._library_batch(texts)
        parts, broken = [], []
        for i, t in enumerate(texts):
            try:
                parts.append(utf8(t) if isinstance(self.fast, RankFileBPE) else t.encode("utf-8"))
            except UnicodeEncodeError:  # a lone surrogate: as the library takes it
                parts.append(b"")
                broken.append(i)
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=offsets[1:])
        data = np.frombuffer(b"".join(parts), dtype=np.uint8)
        ids, ends = self._fast_encode(data, offsets, -1, broken, texts)
        flat, bounds = ids.tolist(), [0, *ends.tolist()]
        return [flat[bounds[i] : bounds[i + 1]] for i in range(len(texts))]

    def _library_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """The library's ids of each text."""
        if not texts:
            return []
        lib = self.lib
        if self.kind == "tiktoken":
            return [lib.encode(t, disallowed_special=()) for t in texts]
        if self.kind == "huggingface":
            os.environ["TOKENIZERS_PARALLELISM"] = "false"  # encode_batch in the calling thread alone
            return [e.ids for e in lib.encode_batch(list(texts), add_special_tokens=False)]
        return list(lib.encode(list(texts), num_threads=1))

    def _fast_encode(
        self,
        data: np.ndarray,
        offsets: np.ndarray,
        append_id: int,
        broken: Sequence[int] = (),
        texts: Sequence[str] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The fast path's (int32 ids, end of each text's ids, ``append_id`` after each when >= 0). A text the kernel
        cannot take as it is: normalized by the library's normalizer first when NFC is all it needs, else (and
        ``broken``, whose ``texts`` it could not take) encoded by the library."""
        if isinstance(self.fast, RankFileBPE):
            ids, ends = self.fast.encode_utf8(data, offsets, self._word_cache(), append_id)
            return ids, ends
        if isinstance(self.fast, SentencePieceBPE):
            ids, ends = self.fast.encode_utf8(data, offsets, self._word_cache(), append_id)
            redo = np.zeros(len(ends), dtype=np.uint8)
        else:
            ids, ends, redo = self.fast.encode_utf8(data, offsets, self._word_cache(), append_id)
        redo[list(broken)] = LIBRARY
        if not redo.any():
            return ids, ends
        which = np.flatnonzero(redo).tolist()
        source: Sequence[str] | dict[int, str] = (
            texts if texts is not None else {i: bytes(data[offsets[i] : offsets[i + 1]]).decode("utf-8") for i in which}
        )
        tail = [append_id] if append_id >= 0 else []
        redone: dict[int, np.ndarray] = {}
        normalize = [i for i in which if redo[i] == NORMALIZE]
        if normalize:  # the library's normalizer, then the kernel over its NFC text when that needs nothing else
            normal = [self.fast.normalizer.normalize_str(source[i]) for i in normalize]
            for i, arr in zip(normalize, self._kernel_texts(normal, append_id, normalized=True), strict=True):
                if arr is not None:
                    redone[i] = arr
        if isinstance(self.fast, TokenizerJsonBPE) and self.fast.added_split is not None:
            # added tokens' text cut out as tokenizers does, the rest the kernel's
            broken_set = set(broken)
            for i in which:
                if redo[i] == LIBRARY and i not in broken_set:
                    plan = self.fast.split_added(source[i])
                    arrays = self._kernel_texts([p for p in plan if isinstance(p, str)], -1)
                    kernel = [a for a in arrays if a is not None]
                    if len(kernel) == len(arrays):
                        found = iter(kernel)
                        pieces = [next(found) if isinstance(p, str) else np.array([p], np.int32) for p in plan]
                        redone[i] = np.concatenate([*pieces, np.array(tail, np.int32)])
        rest = [i for i in which if i not in redone]
        for i, e in zip(rest, self._library_batch([source[i] for i in rest]), strict=True):
            redone[i] = np.asarray(e + tail, dtype=np.int32)
        starts = np.concatenate([[0], ends[:-1]])
        lengths = ends - starts
        pieces, at = [], 0
        for i in which:
            pieces += [ids[at : starts[i]], redone[i]]
            at = int(ends[i])
            lengths[i] = len(redone[i])
        pieces.append(ids[at:])
        return np.concatenate(pieces), np.cumsum(lengths)

    def _kernel_texts(self, texts: list[str], append_id: int, normalized: bool = False) -> list[np.ndarray | None]:
        """The kernel's int32 ids of each text (``append_id`` after them when >= 0), a text NFC may change normalized
        first (unless ``normalized``), None for one the library must encode."""
        parts = [t.encode("utf-8") for t in texts]
        offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
        ids, ends, codes = self.fast.encode_utf8(
            np.frombuffer(b"".join(parts), dtype=np.uint8), offsets, self._word_cache(), append_id
        )
        starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
        out: list[np.ndarray | None] = [
            ids[starts[k] : ends[k]] if codes[k] == 0 or (normalized and codes[k] == NORMALIZE) else None
            for k in range(len(texts))
        ]
        again = [k for k in range(len(texts)) if not normalized and codes[k] == NORMALIZE]
        if again:
            normal = [self.fast.normalizer.normalize_str(texts[k]) for k in again]
            for k, arr in zip(again, self._kernel_texts(normal, append_id, normalized=True), strict=True):
                out[k] = arr
        return out

    def encode_utf8_documents(
        self, data: np.ndarray, offsets: np.ndarray, prefix: Sequence[int], eod: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`encode_documents` of the UTF-8 texts ``data[offsets[i]:offsets[i+1]]`` on the fast path (an Arrow
        column's buffers, no Python string made)."""
        ids, ends = self._fast_encode(data, np.asarray(offsets, dtype=np.int64), eod)
        if not prefix:
            return ids, ends
        starts = np.concatenate([[0], ends[:-1]])
        ids = np.insert(ids, np.repeat(starts, len(prefix)), np.tile(np.asarray(prefix, dtype=np.int32), len(ends)))
        return ids, ends + len(prefix) * np.arange(1, len(ends) + 1)

    def encode_documents(self, texts: Sequence[str], prefix: Sequence[int], eod: int) -> tuple[np.ndarray, np.ndarray]:
        """(flat int64 ids, int64 end of each document in them): ``prefix`` (the BOS or nothing), the text's ids
        and ``eod`` per text, in order."""
        arrays = self._sentencepiece_arrays(texts) if self.kind == "sentencepiece" else None
        if arrays is not None:
            lengths = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
        else:
            encoded = self.encode_batch(texts)
            lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        extra = len(prefix) + 1
        ends = np.cumsum(lengths + extra)
        ids = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        around = np.zeros(ids.size, dtype=np.bool_)  # the prefix and EOD positions; the texts' ids fill the rest
        ids[ends - 1] = eod
        around[ends - 1] = True
        starts = ends - lengths - extra
        for j, p in enumerate(prefix):
            ids[starts + j] = p
            around[starts + j] = True
        if arrays is not None:
            ids[~around] = np.concatenate(arrays) if arrays else np.zeros(0, np.int64)
        else:
            ids[~around] = np.fromiter(itertools.chain.from_iterable(encoded), dtype=np.int64, count=int(lengths.sum()))
        return ids, ends

    def _sentencepiece_arrays(self, texts: Sequence[str]) -> list[np.ndarray] | None:
        """SentencePiece's ids of each text as int32 arrays straight from its C++ buffers (the same encoder as
        ``encode``, without a Python int per id), or None when this sentencepiece cannot return them."""
        try:
            arrays: list[np.ndarray] = self.lib.encode(list(texts), num_threads=1, return_type="numpy")
        except TypeError:  # sentencepiece before 0.2.1
            return None
        return arrays

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` (bytes that are not UTF-8 become U+FFFD)."""
        lib = self.lib
        ids = [int(i) for i in ids]
        if self.kind == "tiktoken":
            try:
                return str(lib.decode(ids, errors="replace"))
            except KeyError:  # an id the file does not hold (a special token not configured): shown by number
                return b"".join(_token_bytes(lib, i) for i in ids).decode("utf-8", errors="replace")
        if self.kind == "huggingface":
            return str(lib.decode(ids, skip_special_tokens=False))
        return str(lib.decode(ids))
