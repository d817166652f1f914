"""Named pre-tokenizer patterns of byte-level BPE tokenizers (``tokenizer.pattern``, docs/tokenizer.md, Kinds).

Each is the split regex the model family's tokenizer publishes; any other value of ``tokenizer.pattern`` is
taken as a regex itself.
"""

from __future__ import annotations

# the contractions, then runs of letters, digits, other symbols and whitespace (GPT-2, r50k/p50k)
GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
# case-insensitive contractions, one optional non-letter before letters, digits in threes (cl100k_base)
CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s"""
)
_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_CONTRACTION = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
# words split at case changes, contractions kept on the word (o200k_base)
O200K = "|".join(
    [
        rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+{_CONTRACTION}",
        rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*{_CONTRACTION}",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)
# Llama 3's tokenizer: cl100k's pieces without possessive quantifiers, newlines grouped
LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# Qwen (1, 1.5, 2, 2.5, 3): as Llama 3's but every digit is its own piece
QWEN2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# Qwen 3.5 and 3.6: as Qwen 2's with combining marks in words and never in punctuation
QWEN35 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# o200k's code-point classes (C_UPPER ... C_SPACE of pretokenize_numba.cased_pretoken_end): its upper and lower
# classes share Lm, Lo and M
CASED_CLASSES = (
    (1, r"[\p{Lu}\p{Lt}]"),
    (2, r"\p{Ll}"),
    (3, r"[\p{Lm}\p{Lo}]"),
    (4, r"\p{M}"),
    (5, r"\p{N}"),
    (6, r"\s"),
)
NAMED_PATTERNS: dict[str, str] = {
    "gpt2": GPT2,
    "cl100k": CL100K,
    "o200k": O200K,
    "llama3": LLAMA3,
    "qwen2": QWEN2,
    "qwen3.5": QWEN35,
}


def resolve_pattern(pattern: str | None) -> str:
    """The regex of ``tokenizer.pattern``: a named pattern's, the value itself, or cl100k's when unset."""
    if pattern is None:
        return CL100K
    return NAMED_PATTERNS.get(pattern, pattern)
