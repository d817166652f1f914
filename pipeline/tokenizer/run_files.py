"""The run's tokenizer files: the trained ones in ``<run>/tokenizer/``, the user's ``tokenizer.vocab`` and
``tokenizer.merges``, or a model's own file in ``tokenizer.path`` (docs/tokenizer.md, Kinds), checked and loaded
with one-line errors that name the key or the stage to rerun."""

from __future__ import annotations

import json
import os
import tempfile

from pipeline import storage
from pipeline.config import ConfigError, PipelineConfig
from pipeline.errors import PipelineError
from pipeline.stage_api import layout
from pipeline.tokenizer.bpe import BPETokenizer
from pipeline.tokenizer.files import vocab_merges_from
from pipeline.tokenizer.library import LibraryTokenizer, UnknownToken
from pipeline.tokenizer.patterns import resolve_pattern


def special_tokens(config: PipelineConfig) -> list[str]:
    """The configured special tokens, with the end-of-document token appended when missing."""
    cfg = config.tokenizer
    return list(dict.fromkeys([*cfg.special_tokens, cfg.eod_token]))


def _local_copy(url: str, directory: str, name: str) -> str:
    """``url`` itself when local, else a copy downloaded as ``directory/name``."""
    if storage.is_local(url):
        return url[len("file://") :] if url.startswith("file://") else url
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(storage.read_bytes(url))
    return path


def _file_error(trained: bool, which: str, message: str) -> PipelineError:
    """A config error naming ``tokenizer.<which>`` for the user's files; a stage error for the trained ones."""
    if trained:
        return PipelineError(f"{message}; rerun with --force train-tokenizer")
    return ConfigError(f"tokenizer.{which}", message)


def load_tokenizer(config: PipelineConfig, trained: str | None = None) -> BPETokenizer | LibraryTokenizer:
    """The run's tokenizer: trained in ``trained`` (the directory train-tokenizer wrote, which the tokenize stage
    is handed; by default the run's ``tokenizer/``), ``tokenizer.vocab`` + ``tokenizer.merges``, or the file in
    ``tokenizer.path`` run by its library.

    Raises ConfigError (``tokenizer.vocab``/``merges``/``path``/``pattern``/``eod_token``/``bos_token``) or
    PipelineError naming a missing or garbled file.
    """
    cfg = config.tokenizer
    if cfg.kind != "bpe":
        return load_library_tokenizer(config)
    vocab: str | None
    merges: str | None
    if cfg.train:
        trained = trained or storage.join(config.output, layout.TOKENIZER)
        vocab, merges = storage.join(trained, "vocab.json"), storage.join(trained, "merges.txt")
        where = "run train-tokenizer first"
    else:
        vocab, merges = cfg.vocab, cfg.merges
        where = "set tokenizer.vocab and tokenizer.merges (or tokenizer.train: true)"
    if not vocab or not merges or not storage.exists(vocab) or not storage.exists(merges):
        raise _file_error(
            cfg.train,
            "vocab" if not vocab or not storage.exists(vocab) else "merges",
            f"tokenizer files not found (vocab={vocab!r}, merges={merges!r}); {where}",
        )
    with tempfile.TemporaryDirectory(prefix="tokenizer-") as tmp:
        local_vocab, local_merges = _local_copy(vocab, tmp, "vocab.json"), _local_copy(merges, tmp, "merges.txt")
        try:
            with open(local_vocab, encoding="utf-8") as f:
                encoder = json.load(f)
            if not isinstance(encoder, dict) or not all(isinstance(i, int) for i in encoder.values()):
                raise ValueError("not a JSON object of token -> integer id")
        except (ValueError, UnicodeDecodeError) as exc:
            raise _file_error(cfg.train, "vocab", f"{vocab!r} is not a GPT-2 vocab.json: {exc}") from None
        try:
            vocab_ids, merge_list, special_ids = vocab_merges_from(encoder, local_merges, special_tokens(config))
            tok = BPETokenizer(vocab_ids, merge_list, special_ids, pattern=cfg.pattern)  # vocab.json parsed once
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            raise _file_error(
                cfg.train,
                "merges",
                f"{merges!r} is not a GPT-2 merges.txt matching the vocab: {type(exc).__name__}: {exc}",
            ) from None
    tok.token_id(cfg.eod_token)  # present: special_tokens() always includes it
    return tok


def load_library_tokenizer(config: PipelineConfig) -> LibraryTokenizer:
    """``tokenizer.path`` run by the library of ``tokenizer.kind``, its EOD (and BOS when asked) checked."""
    cfg = config.tokenizer
    path = cfg.path or ""
    if not path or not storage.exists(path):
        raise ConfigError("tokenizer.path", f"file not found: {path!r}")
    data = storage.read_bytes(path)
    pattern = resolve_pattern(cfg.pattern) if cfg.kind == "tiktoken" else ""
    specials = cfg.special_tokens if isinstance(cfg.special_tokens, dict) else {}
    what = {"tiktoken": "a tiktoken rank file", "huggingface": "a tokenizer.json", "sentencepiece": "a .model"}
    if cfg.kind == "tiktoken":
        try:
            _check_pattern(pattern)
        except ImportError as exc:
            raise ConfigError(
                "tokenizer.kind", f"tiktoken needs its library: pip install '.[models]' ({exc})"
            ) from None
    try:
        tok = LibraryTokenizer(cfg.kind, data, os.path.basename(path.rstrip("/")), pattern, specials)
    except ImportError as exc:
        raise ConfigError("tokenizer.kind", f"{cfg.kind} needs its library: pip install '.[models]' ({exc})") from None
    except Exception as exc:  # each library raises its own types on a garbled file
        message = " ".join(str(exc).split())[:300]
        raise ConfigError(
            "tokenizer.path", f"{path!r} is not {what[cfg.kind]}: {type(exc).__name__}: {message}"
        ) from None
    eod_id(config, tok)
    bos_ids(config, tok)
    return tok


def _check_pattern(pattern: str) -> None:
    """``tokenizer.pattern`` compiles as tiktoken compiles it (fancy-regex)."""
    import tiktoken

    try:
        tiktoken.Encoding(
            "pattern-check", pat_str=pattern, mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={}
        )
    except ValueError as exc:
        message = " ".join(str(exc).split())[:300]
        raise ConfigError("tokenizer.pattern", f"{pattern!r} does not compile: {message}") from None


def eod_id(config: PipelineConfig, tok: BPETokenizer | LibraryTokenizer) -> int:
    """The id of ``tokenizer.eod_token``; ConfigError when the tokenizer has none."""
    cfg = config.tokenizer
    if isinstance(tok, BPETokenizer):
        return tok.token_id(cfg.eod_token)
    try:
        return tok.token_id(cfg.eod_token)
    except UnknownToken:
        own = tok.eos_token()
        hint = f" (its EOS is {own!r})" if own else ""
        raise ConfigError("tokenizer.eod_token", f"{cfg.eod_token!r} is not a token of {cfg.path!r}{hint}") from None


def bos_ids(config: PipelineConfig, tok: BPETokenizer | LibraryTokenizer) -> list[int]:
    """``[BOS id]`` when the documents start with the BOS (``tokenizer.add_bos``; no BOS by default, as
    megatron-core's tokenizer classes), else ``[]``; ConfigError when the tokenizer has no such token."""
    cfg = config.tokenizer
    if not cfg.add_bos or isinstance(tok, BPETokenizer):
        return []
    text = cfg.bos_token or tok.bos_token()
    if not text:
        raise ConfigError("tokenizer.bos_token", f"{cfg.path!r} names no BOS token; give tokenizer.bos_token")
    try:
        return [tok.token_id(text)]
    except UnknownToken:
        raise ConfigError("tokenizer.bos_token", f"{text!r} is not a token of {cfg.path!r}") from None
