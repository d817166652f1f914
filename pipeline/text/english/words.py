"""English words and sentences as datatrove 0.10.1 splits them with spaCy's blank English pipeline, without spaCy.

spaCy's tokenizer, as documented on spacy.io ("How spaCy's tokenizer works"): the text is cut into runs of
whitespace and non-whitespace; each non-whitespace chunk is a special case, or loses prefixes and suffixes
until a special case or nothing is left, then the rest is a URL, a special case or is cut at infixes
(``spacy_affixes.py``); a special case whose text the affix rules split is restored afterwards when its pieces
stand side by side (``spacy_special_cases.py``). Each chunk's tokens are cached (``chunk_cache.py``), and a
text's chunks are corrected where a special case could straddle the space between two (``text_tokens.py``).
A whitespace run between two chunks becomes a token unless it is one plain space (its first space belongs to
the token before). Sentences: ``sentences.py``. This module is the public entry (docs/api.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pipeline.text.english.chunk_cache import chunk_tokens
from pipeline.text.english.sentences import count_sentences, split_sentences
from pipeline.text.english.text_tokens import text_words

__all__ = ["chunk_tokens", "count_sentences", "count_words", "shared_splits", "split_sentences", "split_words"]

_shared: dict[str, list[str]] | None = None  # text -> its words, inside ``shared_splits``
_SHARED_WORDS = 4_000_000  # words the memo holds at most (it stops adding beyond)
_shared_size = 0


@contextmanager
def shared_splits() -> Iterator[None]:
    """Within the block ``split_words`` and ``count_words`` split each distinct text once: several filters of a
    stage that read the same batch share one split per text. The memo is dropped when the outermost block ends."""
    global _shared, _shared_size
    if _shared is not None:
        yield
        return
    _shared, _shared_size = {}, 0
    try:
        yield
    finally:
        _shared, _shared_size = None, 0


def _words(text: str) -> list[str]:
    """The words of ``text`` (from the memo inside ``shared_splits``; never to be changed by the caller)."""
    global _shared_size
    memo = _shared
    if memo is None:
        return text_words(text)
    found = memo.get(text)
    if found is None:
        found = text_words(text)
        if _shared_size + len(found) <= _SHARED_WORDS:
            memo[text] = found
            _shared_size += len(found)
    return found


def split_words(text: str) -> list[str]:
    """``datatrove.utils.text.split_into_words(text, "en")``: spaCy's non-whitespace tokens."""
    words = _words(text)
    return words if _shared is None else list(words)


def count_words(text: str) -> int:
    """``len(split_words(text))``."""
    return len(_words(text))
