"""English words and sentences (pipeline/text/english/words.py) against datatrove 0.10.1's ``split_into_words`` and
``split_into_sentences`` (spaCy's blank English pipeline with the sentencizer) on real text: the shared
fixtures, Python sources and docstrings of the installed packages, Debian's HTML documentation as ingest
extracts it, and Debian copyright files. Every document's word list and sentence list must be equal."""

from __future__ import annotations

import ast
import site
import sys
from pathlib import Path

import pytest

from pipeline.sources.web import EXTRACTORS
from pipeline.text.english import english_tables, words
from tests.oracles import missing_tool, require_oracle

dt_text = require_oracle("datatrove.utils.text")
require_oracle("spacy")

# Documented, pinned differences per corpus: kind -> count. Empty: every sampled document agrees.
KNOWN_DIFFERENCES: dict[str, dict[str, int]] = {}


def _every(paths: list[Path], n: int) -> list[Path]:
    """``n`` paths spread evenly over the sorted list (a deterministic sample)."""
    paths = sorted(paths)
    step = max(1, len(paths) // n)
    return paths[::step][:n]


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _fixture_docs(shared: Path) -> list[str]:
    docs = []
    lines = _read(shared / "corpus.en").splitlines(keepends=True)
    docs += ["".join(lines[i : i + 40]) for i in range(0, len(lines), 40)][:25]
    docs += [d for d in _read(shared / "tinystories_sample.txt").split("\n\n") if d.strip()]
    docs += [_read(shared / "address.txt"), _read(shared / "german.txt")]
    return docs


def _python_files() -> list[Path]:
    roots = [Path(d) for d in site.getsitepackages()]
    return _every([p for r in roots for p in r.glob("*/*.py") if p.is_file()], 40)


def _source_docs() -> list[str]:
    return [_read(p)[:20_000] for p in _python_files()]


def _docstring_docs() -> list[str]:
    docs = []
    for path in _python_files():
        try:
            tree = ast.parse(_read(path))
        except (SyntaxError, ValueError):
            continue
        nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef))]
        found = [d for n in nodes if (d := ast.get_docstring(n, clean=False))]
        if found:
            docs.append("\n\n".join(found)[:10_000])
    return docs


def _html_docs() -> list[str]:
    pages = [p for p in Path("/usr/share/doc").rglob("*.html") if p.is_file()]
    texts = [EXTRACTORS["resiliparse"](_read(p)) for p in _every(pages, 40)]
    return [t[:30_000] for t in texts if t.strip()]


def _copyright_docs() -> list[str]:
    return [_read(p)[:10_000] for p in _every(list(Path("/usr/share/doc").glob("*/copyright")), 40)]


def _agreement(docs: list[str]) -> tuple[int, list[str]]:
    """Documents whose words and sentences both equal datatrove's, and a description of each difference."""
    equal, diffs = 0, []
    for doc in docs:
        ours_w, theirs_w = words.split_words(doc), dt_text.split_into_words(doc, "en")
        ours_s, theirs_s = words.split_sentences(doc), dt_text.split_into_sentences(doc, "en")
        if ours_w == theirs_w and ours_s == theirs_s:
            equal += 1
            continue
        kind = "words" if ours_w != theirs_w else "sentences"
        a, b = (ours_w, theirs_w) if kind == "words" else (ours_s, theirs_s)
        i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        diffs.append(f"{kind}: ours {a[i : i + 3]!r} vs datatrove {b[i : i + 3]!r}")
    return equal, diffs


CORPORA = {
    "fixtures": None,  # needs ../shared
    "python_sources": _source_docs,
    "docstrings": _docstring_docs,
    "debian_html": _html_docs,
    "debian_copyright": _copyright_docs,
}


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_real_documents_split_as_datatrove(corpus, request):
    if corpus == "fixtures":
        docs = _fixture_docs(request.getfixturevalue("shared_fixtures"))
    else:
        docs = CORPORA[corpus]()
    if not docs:
        missing_tool(f"no {corpus} documents on this machine (/usr/share/doc, site-packages)")
    equal, diffs = _agreement(docs)
    print(f"{corpus}: {equal}/{len(docs)} documents equal")
    assert len(diffs) == sum(KNOWN_DIFFERENCES.get(corpus, {}).values()), diffs[:5]
    assert equal + len(diffs) == len(docs)


EDGE_CASES = [
    "",
    " ",
    "  leading and trailing  ",
    "Don't stop. We can't, won't and shouldn't!",
    'He said: "Hello." Then (Mr. Smith) left... and U.S. troops came.',
    "Visit https://example.com/a?b=c). Or www.google.com. Mail foo@bar.com!",
    "Emoticons :) :-) hi:) x:):) (:) <3 x;);) ^_^ ¯\\(ツ)/¯",
    "Numbers: 5km, 10°C., $5, US$10, 2,500.00, 1/2, 3-4, 5+6, 100%.",
    "Tabs\tand\n\nnewlines\r\n and \u00a0nbsp\u2003em space. Done?! Yes.\n",
    "Ellipsis…and dashes—here–there -- a--b. a.b.c, e.g., i.e. etc. gonna y'all 'tis",
    "Quotes: “smart” ‘single’ «guillemets» 「日本語」。次の文！",
    'Sentences end here! Really? Yes. "Quoted." (Parenthesised.) Next.',
    "Tricky: a.B c.D. O'Neil's John's JOHN'S rock'n'roll 9am 10p.m. 11a.m.",
    "Symbols © ® ° ™ → ★ ✓ 😀😀 and math ∑∫ (x+y)=z, a<b>c, key=value, path/to/file.",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_split_as_datatrove(text):
    assert words.split_words(text) == dt_text.split_into_words(text, "en")
    assert words.split_sentences(text) == dt_text.split_into_sentences(text, "en")
    assert words.count_words(text) == len(dt_text.split_into_words(text, "en"))


def test_count_sentences_is_datatrove_s_sentence_count_line_by_line():
    """``count_sentences`` (C4 counts the sentences of each kept line) on real lines, with and without a
    sentence-final character before the last one (its shortcut and its full path both taken)."""
    lines = [line.strip() for doc in _html_docs() + _docstring_docs() for line in doc.splitlines()]
    lines = [line for line in lines if line][:4000] + EDGE_CASES
    if len(lines) < 100:
        missing_tool("too few real lines on this machine (/usr/share/doc, site-packages)")
    shortcut = sum(words.count_sentences(line) == 1 for line in lines)
    assert 0 < shortcut < len(lines)
    wrong = [x for x in lines if words.count_sentences(x) != len(dt_text.split_into_sentences(x, "en"))]
    assert not wrong, wrong[:3]


def test_sentences_join_back_into_the_text():
    text = 'One. Two!  Three?\n\nFour "five." Six'
    assert "".join(words.split_sentences(text)) == text
    assert len(words.split_sentences(text)) == len(dt_text.split_into_sentences(text, "en"))


def test_tables_equal_a_fresh_measurement_of_spacy():
    from tests.spacy_english_facts import measure

    facts = measure()
    for key, value in facts.items():
        assert getattr(english_tables, key) == value, key


def test_no_rule_splits_a_chunk_of_letters():
    """The fast path: an all-letter chunk is one token unless it is a special case (checked on spaCy too)."""
    import re

    letters = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isalpha())
    for name in ("PREFIX_CHARS", "SUFFIX_CHARS", "ICONS"):
        assert not re.search("[" + getattr(english_tables, name) + "]", letters), name
    spacy = require_oracle("spacy")
    tok = spacy.blank("en").tokenizer
    sample = letters[::97]
    chunks = [sample[i : i + 7] for i in range(0, len(sample), 7)]
    assert [t.text for t in tok(" ".join(chunks))] == chunks


# Pieces that exercise every rule: affixes, units and currencies, contractions, emoticon parts, URLs, scripts.
PIECES = [
    ":", ")", "(", "'", "-", ";", "x", "word", "Word", "AB", "D", "<", "3", "=", ".", "..", "o", "_", "^", "|",
    "8", "/", "*", "0", "1", "km", "$", "US$", "€", "%", "+", ",", "!", "?", '"', "“", "”", "’", "'s", "n't",
    "don", "can", "…", "—", "–", "~", "°", "C", "©", "™", "😀", "日本", "й", "é", "http://", "www", ".com", "@",
    "a.m.", "Mr", "e.g", "#", "&", "[", "]", "{", "}", "\\", "’s", "ª", "²", "U.S", "a", "b",
]  # fmt: skip
SEPARATORS = [" ", "  ", "\n", " \n ", "\t", ". ", "! ", "? ", '." ', ".\n"]


def test_random_chunks_and_texts_split_as_spacy():
    """Deterministic random glue of rule-triggering pieces: every chunk's tokens equal spaCy's, every text's
    words and sentences equal datatrove's (emoticons side by side, suffix chains, dots, units, URLs)."""
    import random

    spacy = require_oracle("spacy")
    tok = spacy.blank("en").tokenizer
    rng = random.Random(7)
    chunks = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6))) for _ in range(4000)]
    wrong = [c for c in chunks if list(words.chunk_tokens(c)) != [t.text for t in tok(c)]]
    assert not wrong, wrong[:5]
    for _ in range(300):
        parts = (rng.choice(PIECES) + (rng.choice(SEPARATORS) if rng.random() < 0.5 else "") for _ in range(20))
        text = "".join(parts)
        assert words.split_words(text) == dt_text.split_into_words(text, "en"), text
        assert words.split_sentences(text) == dt_text.split_into_sentences(text, "en"), text


def test_real_chunks_split_as_spacy_by_each_path():
    """Every distinct chunk of the real corpora, tokenized alone: ours (whichever path it takes: the shortcut for
    single-character affixes, the full affix rules) equals spaCy's tokenizer; both paths are taken many times."""
    from pipeline.text.english import spacy_affixes

    spacy = require_oracle("spacy")
    tok = spacy.blank("en").tokenizer
    docs = _source_docs() + _html_docs() + _copyright_docs()
    chunks = list(dict.fromkeys(c for doc in docs for c in doc.split() if not c.isalpha()))[:30_000]
    if len(chunks) < 1000:
        missing_tool("too few real chunks on this machine (/usr/share/doc, site-packages)")
    short = [c for c in chunks if c not in spacy_affixes.SPECIALS and spacy_affixes.stripped_affixes(c) is not None]
    assert len(short) > 1000 and len(chunks) - len(short) > 1000, (len(short), len(chunks))
    wrong = [c for c in chunks if list(words.chunk_tokens(c)) != [t.text for t in tok(c)]]
    assert not wrong, wrong[:5]


def test_fast_character_classes_hold_the_table_s_characters():
    """``char_class`` (astral ranges behind one range test) matches exactly the characters of the plain class
    ``[body]``, for every class of the tables, on every code point (the astral ones and a BMP sample)."""
    import re

    from pipeline.text.english.char_classes import char_class

    points = [*range(0, 0x10000, 3), *range(0x10000, sys.maxunicode + 1)]
    text = "".join(chr(c) for c in points if not 0xD800 <= c <= 0xDFFF)
    for name in ("ICONS", "ALPHA", "LOWER", "UPPER", "QUOTES", "DOT_AFTER", "PREFIX_CHARS", "SUFFIX_CHARS"):
        body = getattr(english_tables, name)
        plain = re.compile("[" + body + "0-9]").findall(text)
        assert plain, name
        assert re.compile(char_class(body, extra="0-9")).findall(text) == plain, name


def test_a_small_chunk_cache_ages_without_changing_words(monkeypatch):
    """With generations of 40 chunks the cache ages many times (chunks dropped, chunks moved back from the older
    generation, rejoined special cases forgotten with them): every text still splits as datatrove's."""
    from pipeline.text.english import chunk_cache

    monkeypatch.setattr(chunk_cache, "_GENERATION", 40)
    chunk_cache.clear()
    texts = [*EDGE_CASES, *_docstring_docs()[:10]] * 2
    for text in texts:
        assert words.split_words(text) == dt_text.split_into_words(text, "en"), text[:80]
        assert words.split_sentences(text) == dt_text.split_into_sentences(text, "en"), text[:80]
    assert 0 < len(chunk_cache.CACHE) and len(chunk_cache._OLDER) <= max(40, *(len(set(t.split())) for t in texts))
    chunk_cache.clear()


def test_special_cases_across_chunks_split_as_spacy():
    """Emoticon pieces glued and spaced: a special case whose pieces straddle a plain space is never rejoined
    but can keep an overlapping one from being rejoined (``") :]"``), as spaCy's whole-text matching does."""
    import random

    spacy = require_oracle("spacy")
    tok = spacy.blank("en").tokenizer
    rng = random.Random(3)
    parts = [":", ")", "(", "'", "-", ";", "x", "D", "<", "3", "=", ".", "o", "_", "^", "|", "8", "]", "s", "Mr"]
    for _ in range(3000):
        gaps = [" ", " ", "  ", "\n"]
        glue = (rng.choice(parts) + (rng.choice(gaps) if rng.random() < 0.4 else "") for _ in range(8))
        text = "".join(glue)
        assert words.split_words(text) == [t.text.strip() for t in tok(text) if t.text.strip()], text
    text = 'tail = header[match.end("val") :].lstrip("'
    assert words.split_words(text) == dt_text.split_into_words(text, "en")


def test_shared_splits_give_datatrove_s_words_and_split_each_text_once(monkeypatch):
    """Inside ``shared_splits`` the words are still datatrove's, a text is split once however often it is asked
    for, a caller's change to its list does not reach the next caller, and the memo ends with the block."""
    calls: list[str] = []
    inner = words.text_words

    def counted(text):
        calls.append(text)
        return inner(text)

    monkeypatch.setattr(words, "text_words", counted)
    texts = EDGE_CASES[3:9]
    with words.shared_splits():
        for _ in range(3):
            for text in texts:
                got = words.split_words(text)
                assert got == dt_text.split_into_words(text, "en")
                assert words.count_words(text) == len(got)
                got.append("changed by a caller")
    assert sorted(calls) == sorted(texts)
    words.split_words(texts[0])
    assert len(calls) == len(texts) + 1  # outside the block: split again


def _catalogue_chunks(every: int = 25) -> list[str]:
    """Distinct chunks of the translated strings of every ``every``-th catalogue under /usr/share/locale."""
    import gettext

    chunks: dict[str, None] = {}
    for path in sorted(Path("/usr/share/locale").glob("*/LC_MESSAGES/*.mo"))[::every]:
        try:
            with open(path, "rb") as handle:
                catalogue = gettext.GNUTranslations(handle)
        except (OSError, UnicodeDecodeError, IndexError, ValueError):
            continue
        chunks.update(dict.fromkeys(c for v in catalogue._catalog.values() for c in str(v).split()))
    return list(chunks)


def test_plain_affixes_chunks_split_as_spacy(request):
    """The cheapest miss path (``plain_affixes``: single-character affixes around letters or ASCII digits, a word
    and its dot) on the distinct chunks of real text in many scripts and of punctuation-heavy sources: every chunk
    it takes gives spaCy's tokens, it takes thousands, non-ASCII ones among them, and declines thousands."""
    from pipeline.text.english import chunk_cache, spacy_affixes

    spacy = require_oracle("spacy")
    tok = spacy.blank("en").tokenizer
    docs = _source_docs() + _html_docs() + _copyright_docs() + _fixture_docs(request.getfixturevalue("shared_fixtures"))
    chunks = list(dict.fromkeys([*(c for doc in docs for c in doc.split()), *_catalogue_chunks()]))
    chunks = [c for c in chunks if not c.isalpha() and c not in spacy_affixes.SPECIALS]
    taken = [c for c in chunks if spacy_affixes.plain_affixes(c) is not None]
    if len(taken) < 1000:
        missing_tool("too few real chunks on this machine (/usr/share/doc, site-packages, /usr/share/locale)")
    assert len(chunks) - len(taken) > 1000
    assert sum(not c.isascii() for c in taken) > 500 and sum(c.endswith(".") for c in taken) > 500
    chunk_cache.clear()
    wrong = [c for c in taken if list(chunk_cache.chunk_tokens(c)) != [t.text for t in tok(c)]]
    assert not wrong, wrong[:5]
    fixed = ["(word),", "«Wort»", "'s,", "‘s", "etc.", "U.S.", "AB.", "ab.", "1924)", "(3)", "can't.", "cannot."]
    assert [list(chunk_cache.chunk_tokens(c)) for c in fixed] == [[t.text for t in tok(c)] for c in fixed]


def test_url_hint_finds_every_url_the_url_rule_matches():
    """The URL rule runs only where its cheap hint is found: on every real chunk with a dot (and hand-made URLs,
    IP addresses, ports, paths) the rule matches nothing the hint misses, and the hint skips most chunks."""
    from pipeline.text.english import spacy_affixes

    docs = _source_docs() + _html_docs() + _copyright_docs()
    made = ["http://a.bc", "www.example.org:8080/x?y#z", "1.2.3.4", "8.8.8.8:53", "u@host.io", "ftp://x.y.zz/", "é.fr"]
    chunks = [c for c in dict.fromkeys([*(c for doc in docs for c in doc.split()), *made]) if "." in c]
    matched = [c for c in chunks if spacy_affixes._URL.match(c)]
    assert len(matched) > 50 and set(made) <= set(matched)
    assert not [c for c in matched if not spacy_affixes._URL_HINT.search(c)]
    assert sum(spacy_affixes._URL_HINT.search(c) is None for c in chunks) > len(chunks) // 2
