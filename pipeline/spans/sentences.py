"""Sentence-level dedup kernels (docs/spans.md, Sentences): datatrove 0.10.1's ``SentenceDedup`` rules for one
document, without datatrove. Its English sentences (spaCy's sentencizer, ``pipeline.text.english``), the
normalized text of every run of ``span`` consecutive sentences and its 64-bit hash (the signature), the
rewrite that drops the duplicated runs, and the rule that removes a document the rewrite left too short.

Pure Python; the stage (``pipeline.spans.stage``) finds which runs are duplicated with a Spark shuffle.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from itertools import accumulate

import numpy as np
import regex

from pipeline.text.english.words import count_sentences, count_words, split_sentences
from pipeline.text.punctuation import PUNCTUATION

KIND_SENTENCES = "sentences"
_NUMBERS = regex.compile(r"\p{Nd}+([.,،٫⎖⎗⎘]\p{Nd}+)?")  # a number, with one decimal part, in any script
_BLANKS = re.compile(r"\s+")
_TO_SPACE = str.maketrans(PUNCTUATION, " " * len(PUNCTUATION))


def normalize(sentence: str) -> str:
    """A sentence as datatrove's ``simplify_text`` (its default ``TextNormConfig``) compares it: lower case,
    numbers as ``0``, punctuation as spaces, whitespace runs as one space, no combining marks after NFD."""
    text = _NUMBERS.sub("0", sentence.lower()).translate(_TO_SPACE)
    text = _BLANKS.sub(" ", text.strip())
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn").strip()


def sentence_ends(text: str) -> list[int]:
    """The end (a character offset) of every sentence of ``text`` as spaCy's sentencizer spans them: the pieces
    of ``split_sentences``, except that the last sentence ends before one plain space that closes the text after
    a non-blank character (that space is the last token's trailing whitespace, in no token). None when empty."""
    if not text:
        return []
    ends = list(accumulate(len(piece) for piece in split_sentences(text)))
    if len(text) >= 2 and text[-1] == " " and not text[-2].isspace():
        ends[-1] -= 1
    return ends


def byte_offsets(text: str) -> np.ndarray:
    """``offsets[c]`` = the UTF-8 byte offset of character ``c`` of ``text`` (``len(text) + 1`` entries)."""
    if text.isascii():
        return np.arange(len(text) + 1, dtype=np.int64)
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    sizes = 1 + (points >= 0x80).astype(np.int64) + (points >= 0x800) + (points >= 0x10000)
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


def signatures(text: str, span: int) -> list[tuple[int, int, int]]:
    """datatrove's ``SentenceDedupSignature.get_hashes``: for each run of ``span`` consecutive non-blank sentences
    whose normalized text is not blank, ``(hash, index, start)``: the first 8 bytes of the SHA-1 of the sentences'
    normalized texts joined by a space (UTF-8; little-endian, as a signed 64-bit integer: datatrove's
    ``HashConfig(64, "sha1")``), the index of its first sentence among the non-blank
    ones, and the character offset where that sentence's text begins."""
    ends = sentence_ends(text)
    kept: list[tuple[str, int]] = []
    for begin, end in zip([0, *ends], ends, strict=False):
        piece = text[begin:end]
        stripped = piece.strip()
        if stripped:
            kept.append((normalize(stripped), begin + len(piece) - len(piece.lstrip())))
    out = []
    for index in range(len(kept) - span + 1):
        joined = " ".join(normalized for normalized, _ in kept[index : index + span])
        if joined.strip():
            value = int.from_bytes(hashlib.sha1(joined.encode("utf-8")).digest()[:8], "little", signed=True)
            out.append((value, index, kept[index][1]))
    return out


def drop_duplicates(text: str, duplicates: list[int], span: int) -> tuple[str, list[tuple[int, int, int]]]:
    """datatrove's ``SentenceDedupFilter.remove_dup_sentences``: each sorted index in ``duplicates`` drops
    ``span`` sentences from that index of the text's sentences (blank ones counted, unlike the signature's
    indices, as datatrove does); the kept sentences joined, each with the whitespace before it, and stripped
    on the left. Returns that text and the dropped runs ``(start, end, first index)`` in characters; a run is
    a maximal stretch of dropped sentences, with the whitespace before each."""
    kept: list[str] = []
    runs: list[tuple[int, int, int]] = []
    run: list[int] | None = None
    drop_until, at, begin = 0, 0, 0
    for index, end in enumerate(sentence_ends(text)):
        if at < len(duplicates) and duplicates[at] <= index:
            if duplicates[at] < index:
                raise ValueError(f"duplicate sentence index {duplicates[at]} listed twice or out of order")
            drop_until, at = index + span, at + 1
        if index >= drop_until:
            if run is not None:
                runs.append((run[0], run[1], run[2]))
                run = None
            kept.append(text[begin:end])
        elif run is None:
            run = [begin, end, index]
        else:
            run[1] = end
        begin = end
    if run is not None:
        runs.append((run[0], run[1], run[2]))
    return "".join(kept).lstrip(), runs


def long_enough(before: str, after: str, min_doc_words: int, min_num_sentences: int) -> bool:
    """datatrove's ``SentenceDedupFilter`` keeps a document when its rewritten text is not empty and is either
    unchanged or has at least ``min_doc_words`` words and ``min_num_sentences`` sentences (0: no minimum)."""
    if not after:
        return False
    if after == before:
        return True
    if min_doc_words > 0 and count_words(after) < min_doc_words:
        return False
    return min_num_sentences <= 0 or count_sentences(after) >= min_num_sentences
