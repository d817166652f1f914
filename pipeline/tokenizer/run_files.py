"""The run's tokenizer files: the trained ones in ``<run>/tokenizer/`` or the user's ``tokenizer.vocab`` and
``tokenizer.merges``, checked and loaded with one-line errors that name the key or the stage to rerun."""

from __future__ import annotations

import json
import os
import tempfile

from pipeline import storage
from pipeline.config import ConfigError, PipelineConfig
from pipeline.errors import PipelineError
from pipeline.stage_api import layout
from pipeline.tokenizer.bpe import BPETokenizer

TOKENIZER_FILES = ("vocab.json", "merges.txt", "tokenizer.json")


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


def load_tokenizer(config: PipelineConfig) -> BPETokenizer:
    """The run's tokenizer: trained in ``<run>/tokenizer/`` or ``tokenizer.vocab`` + ``tokenizer.merges``.

    Raises ConfigError (``tokenizer.vocab``/``merges``) or PipelineError naming a missing or garbled file.
    """
    cfg = config.tokenizer
    vocab: str | None
    merges: str | None
    if cfg.train:
        trained = storage.join(config.output, layout.TOKENIZER)
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
            tok = BPETokenizer.from_files(local_vocab, local_merges, special_tokens(config))
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            raise _file_error(
                cfg.train,
                "merges",
                f"{merges!r} is not a GPT-2 merges.txt matching the vocab: {type(exc).__name__}: {exc}",
            ) from None
    tok.token_id(cfg.eod_token)  # present: special_tokens() always includes it
    return tok
