"""The word splitter's fast paths for first-seen chunks (issue #47, item 3) against spaCy's blank English tokenizer
(datatrove 0.10.1's ``split_into_words``): the one-pass affix shortcut, the infix-free core, the cache lookup that
fills only its misses, and the positions of rejoined special cases."""

from __future__ import annotations

import pytest

from pipeline.text.english import chunk_cache, spacy_affixes, text_tokens, words
from tests.oracles import require_oracle

dt_text = require_oracle("datatrove.utils.text")

# cores with and without a character an infix may start with, around single-character affixes and before a dot
CHUNKS = [
    "x86_64",
    "(x86_64),",
    "foo_bar.",
    "(foo_bar).",
    "a😀b",
    "(a😀b)",
    "a🙂b.",
    "a©b",
    "(a©b)",
    "a–b",
    "a—b,",
    "a~b",
    "a/b",
    "(a:b)",
    "3^4",
    "3*4.",
    "e.g.",
    "(e.g.",
    "etc.)",
    "U.S.",
    "(U.S.)",
    "AB.",
    "can't.",
    "'s",
    "(s)",
    "x.y.z",
    "example.com/path",
    "(www.example.com).",
    "über_größe",
    "«über»",
    "1924)",
    "3.5",
    "(3.5)",
    "v1.2.3-rc1",
    "__init__.py",
    ":)",
    "(:)",
    ":-)",
    "a:)",
]


@pytest.mark.parametrize("chunk", CHUNKS)
def test_first_seen_chunk_splits_as_spacy(chunk):
    """Each chunk alone, from an empty cache, gives spaCy's tokens; the one-pass shortcut is the two it replaces."""
    chunk_cache.clear()
    spacy = require_oracle("spacy")
    expected = [t.text for t in spacy.blank("en").tokenizer(chunk)]
    assert list(chunk_cache.chunk_tokens(chunk)) == expected
    assert spacy_affixes.shortcut_affixes(chunk) == (
        spacy_affixes.plain_affixes(chunk) or spacy_affixes.stripped_affixes(chunk)
    )


def test_texts_with_repeated_misses_and_hits_split_as_datatrove():
    """Texts whose chunks repeat, some cached before and some not, with special cases that rejoin inside a chunk
    and next to one another: every text's words equal datatrove's."""
    texts = [
        " ".join(CHUNKS),
        "Smile :) (e.g. this) and :) again, e.g. (e.g. that) x86_64 x86_64 (x86_64), a😀b a😀b",
        "\n".join(CHUNKS[::-1]) + "\n" + " ".join(CHUNKS[::3]),
        "(e.g. :) e.g. :) (e.g. :) (U.S.) U.S. (U.S.)",
    ]
    chunk_cache.clear()
    chunk_cache.chunk_tokens("x86_64")  # a hit among misses
    for text in texts:
        assert words.split_words(text) == dt_text.split_into_words(text, "en")
    for text in texts:  # every chunk cached now
        assert words.split_words(text) == dt_text.split_into_words(text, "en")


@pytest.mark.parametrize("hits", [set(), {"b"}, {"b", "d"}, {"a", "b", "c", "d", "e"}, {"z"}])
def test_positions_of_hits_in_order(hits):
    """The positions of the chunks in ``hits``, ascending, whether few (scanned per hit) or many."""
    chunks = ["a", "b", "c", "b", "d", "e", "b", "a", "d"]
    assert text_tokens.positions(chunks, hits) == [i for i, c in enumerate(chunks) if c in hits]


# a special case rejoined inside a chunk (":]" in ":].strip()") next to a gap where another's pieces meet (")" and
# ":" make "):"): blocked when the match across the gap comes first, kept when it does not reach the rejoined one
ACROSS_GAPS = [
    'line = line[len("--editable") :].strip().lstrip("=") x',
    'v = v[len(p) :].split()[0] w = v.partition("-")[0]',
    "f(a) :].x",
    "f(a)  :].x",
    "f(a)\n:].x",
    "f(a) b :].x",
    "(main): (main): x",
    "x: (main): :( y",
    "a :) :-) (: ): :]",
    ":( ): :( ):",
    "Don't :) Dont (:) cannot :-(",
    "b) :]) :] :)",
]


@pytest.mark.parametrize("text", ACROSS_GAPS)
def test_special_cases_across_gaps_split_as_datatrove(text):
    """Texts whose rejoined special cases stand beside a gap where pieces of another meet: the words equal
    datatrove's from an empty cache and again from a full one."""
    chunk_cache.clear()
    assert words.split_words(text) == dt_text.split_into_words(text, "en")
    assert words.split_words(text) == dt_text.split_into_words(text, "en")
    assert text_tokens.text_words(text) == [w for ws in text_tokens.doc_tokens(text, text.split())[0] for w in ws]
