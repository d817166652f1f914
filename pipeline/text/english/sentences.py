"""English sentences as datatrove 0.10.1's ``split_into_sentences(text, "en")`` cuts them with spaCy's sentencizer:
a sentence starts at the first token after a sentence-final character (``SENTENCE_END``) that is not punctuation
itself, or at a whitespace token after one."""

from __future__ import annotations

import re
import unicodedata

from pipeline.text.english import english_tables as T
from pipeline.text.english.chunk_cache import CACHE, chunk_tokens
from pipeline.text.english.text_tokens import doc_tokens

_SENTENCE_END = frozenset(T.SENTENCE_END)
_HAS_SENTENCE_END = re.compile("[" + re.escape(T.SENTENCE_END) + "]")
_PIECES = re.compile(r"\s+|\S+")
_END_CHUNK = re.compile(r"(?<!\S)\S*[" + re.escape(T.SENTENCE_END) + r"]\S*")
_NEXT_CHUNK = re.compile(r"(\s*)(\S+)")


def _is_punct(token: str) -> bool:
    """spaCy's ``is_punct``: every character is in a Unicode punctuation category (P*)."""
    return all(unicodedata.category(c)[0] == "P" for c in token)


def count_sentences(text: str) -> int:
    """``len(split_sentences(text))``. A sentence starts only after a token that is a sentence-final character,
    so a text with no such character before its last one is one sentence (no tokenizing needed)."""
    if _HAS_SENTENCE_END.search(text, 0, len(text) - 1) is None:
        return 1
    return len(split_sentences(text))


def split_sentences(text: str) -> list[str]:
    """``datatrove.utils.text.split_into_sentences(text, "en")``: the text cut after each sentence's last
    token, so whitespace between sentences opens the next one and the pieces join back into ``text``."""
    chunks = text.split()
    tokens, changed = doc_tokens(text, chunks)
    if changed:
        return _split_sentences_by_index(text, tokens)
    cuts: list[int] = []
    seen_end = False  # a sentence-final token was seen and no sentence has started since
    prev_end = 0  # end of the last non-whitespace token
    pos = 0
    while True:
        if not seen_end:  # jump to the next chunk holding a sentence-final character
            m = _END_CHUNK.search(text, pos)
            if m is None:
                break
            start, chunk = m.start(), m.group()
        else:
            m = _NEXT_CHUNK.match(text, pos)
            if m is None:
                if text[pos:] and text[pos:] != " ":  # trailing whitespace token
                    cuts.append(prev_end)
                break
            gap = m.group(1)
            if gap and gap != " ":  # a whitespace token starts the sentence
                cuts.append(prev_end)
                seen_end = False
                pos = m.start(2)
                continue
            start, chunk = m.start(2), m.group(2)
        at = start
        for tok in CACHE.get(chunk) or chunk_tokens(chunk):
            in_end = tok in _SENTENCE_END
            if seen_end and not in_end and not _is_punct(tok):
                cuts.append(prev_end)
                seen_end = False
            elif in_end:
                seen_end = True
            at += len(tok)
            prev_end = at
        pos = start + len(chunk)
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def _split_sentences_by_index(text: str, tokens: list[tuple[str, ...]]) -> list[str]:
    """``split_sentences`` token by token, for a text whose chunks' tokens depend on their neighbours."""
    cuts: list[int] = []
    seen_end = False
    prev_end = 0  # end of the last non-whitespace token
    index = -1
    for m in _PIECES.finditer(text):
        piece = m.group()
        if piece[0].isspace():
            if seen_end and piece != " ":  # a whitespace token: all of the run but a leading plain space
                cuts.append(prev_end)
                seen_end = False
            continue
        index += 1
        if not seen_end and not _HAS_SENTENCE_END.search(piece):
            prev_end = m.end()
            continue
        pos = m.start()
        for tok in tokens[index]:
            in_end = tok in _SENTENCE_END
            if seen_end and not in_end and not _is_punct(tok):
                cuts.append(prev_end)
                seen_end = False
            elif in_end:
                seen_end = True
            pos += len(tok)
            prev_end = pos
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
