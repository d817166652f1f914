"""English words and sentences as datatrove 0.10.1 splits them (``split_into_words`` / ``split_into_sentences``
with language ``en``).

Stand-in: spaCy's blank English pipeline with its sentencizer, imported lazily. The filter-words branch replaces
this module with a spaCy-free implementation of the same two functions.
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _english() -> Any:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_words(text: str) -> list[str]:
    """spaCy's English tokens of ``text``, stripped, empty ones left out."""
    nlp = _english()
    nlp.max_length = len(text) + 10
    with nlp.memory_zone():
        tokens = [token.text.strip() for token in nlp(text)]
    return [token for token in tokens if token]


def split_sentences(text: str) -> list[str]:
    """``text`` cut after each sentencizer sentence end; the pieces cover ``text`` (the last runs to its end)."""
    nlp = _english()
    nlp.max_length = len(text) + 10
    with nlp.memory_zone():
        ends = [sent.end_char for sent in nlp(text).sents]
    cuts = [0, *ends[:-1], len(text)]
    return [text[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
