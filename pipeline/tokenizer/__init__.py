"""Byte-level BPE tokenizer kernel (no Spark): training, GPT-2 style files, encoding, decoding."""

from pipeline.tokenizer.bpe import BPETokenizer
from pipeline.tokenizer.pretokenize import GPT2_PATTERN, count_pretokens

__all__ = ["BPETokenizer", "GPT2_PATTERN", "count_pretokens"]
