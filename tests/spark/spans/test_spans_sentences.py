"""Sentence-level spans (docs/spans.md, Sentences) against datatrove 0.10.1's SentenceDedup itself: its three
steps (signature, find dedups, filter) run with local folders over the same documents in doc_id order, on
real text with planted repeats; the stage must keep, rewrite and remove exactly the documents it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.spans.sentences import sentence_ends, signatures
from tests.oracles import require_oracle
from tests.spans_oracle import real_documents
from tests.spans_stage_run import run_stage

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO.parent / "shared" / "fixtures"
sentence_dedup = require_oracle("datatrove.pipeline.dedup.sentence_dedup")
hashing = require_oracle("datatrove.utils.hashing")
data = require_oracle("datatrove.data")
word_tokenizers = require_oracle("datatrove.utils.word_tokenizers")

A = (
    "The committee met on Tuesday to review the budget. Several members raised concerns about the new rules. "
    "The chair promised a written answer within 14 days. "
)
# numbers normalize to 0: these sentences are all the same to the signature, so each run after the first repeats
FILLER = " ".join(f"Filler sentence number {w} talks about topic {w * 7} at some length here." for w in range(12))


def planted_documents() -> list[tuple[int, str]]:
    """Hand-made cases around real text: a three-sentence run copied into other documents (with different
    case, numbers and punctuation, which normalization ignores), a run repeated inside one document, a document
    the drop leaves too short, leading and trailing whitespace, diacritics, and an empty document."""
    german = (FIXTURES / "german.txt").read_text(encoding="utf-8")
    stories = (FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8")
    prose = (FIXTURES / "corpus.en").read_text(encoding="utf-8").splitlines()[:30]
    umlauts = "Die Grüße kamen aus Köln. Sie waren sehr herzlich. Wir haben uns gefreut. "
    return [
        (40, A + FILLER),
        (-7, "Opening words of the first document by id. " + A.upper() + " Then it goes on. " + FILLER[:300]),
        (41, "Short one. " + A.replace("14", "90").replace(".", "!")),  # too short once the run goes
        (42, "\n\n  " + A + "After the copied run, the text continues with words of its own. " + FILLER),
        (43, "Inside one document: " + A + " and again: " + A + " and a third time. " + A + "  "),
        (44, german + "\n\nEnde. " + umlauts),
        (45, umlauts.replace("Grüße", "Gruße").replace("Köln", "Koln") + german[:400] + " "),
        (46, stories),
        (47, stories[: len(stories) // 2] + "\n" + A + "\n"),
        (48, ""),
        (49, "Only one sentence without an end"),
        (50, "Doc fifty opens with words of its own. " + "\n".join(prose[:15]) + "\n" + A + "\n".join(prose[15:])),
    ]


def _datatrove(docs: list[tuple[int, str]], tmp: Path, span: int, min_words: int, min_sentences: int):
    """datatrove's SentenceDedup (SHA-1 64-bit hashes: 0.10.1's default xxhash hash cannot take the str it is
    given with xxhash 4) as one task over ``docs`` in doc_id order -> {doc_id: text} of the documents kept."""
    config = sentence_dedup.SentDedupConfig(
        n_sentences=span,
        min_doc_words=min_words,
        min_num_sentences=min_sentences,
        hash_config=hashing.HashConfig(precision=64, hash_fc="sha1"),
    )
    ordered = sorted(docs)

    def documents():
        return iter([data.Document(text=text, id=str(doc_id)) for doc_id, text in ordered])

    sentence_dedup.SentenceDedupSignature(output_folder=str(tmp / "sigs"), config=config).run(documents(), 0, 1)
    sentence_dedup.SentenceFindDedups(str(tmp / "sigs"), str(tmp / "dups"), config=config).run(rank=0, world_size=1)
    kept = sentence_dedup.SentenceDedupFilter(str(tmp / "dups"), config=config).run(documents(), 0, 1)
    return {int(doc.id): doc.text for doc in kept}


def test_sentence_ends_and_signatures_equal_datatrove_on_real_text():
    tokenizer = word_tokenizers.load_word_tokenizer("en")
    step = sentence_dedup.SentenceDedupSignature(
        output_folder="/nonexistent", config=sentence_dedup.SentDedupConfig(hash_config=hashing.HashConfig(64, "sha1"))
    )
    edges = ["Abc. Def ghi. ", "Abc. Def ghi.  ", "Abc. Def ghi.\n ", "abc   ", "a b\t ", " ", "x", "  Abc. Def."]
    for text in [*edges, *(t for _, t in planted_documents()), *(t for _, t in real_documents(200_000))]:
        assert sentence_ends(text) == [end for _, end in tokenizer.span_tokenize(text)], text[:60]
        theirs = [(value, index) for value, _, index in step.get_hashes(data.Document(text=text, id="0"), 0)]
        assert [(value % (1 << 64), index) for value, index, _ in signatures(text, 3)] == theirs, text[:60]


@pytest.mark.spark
@pytest.mark.parametrize(("span", "min_words", "min_sentences"), [(3, 50, 3), (2, 20, 0)])
def test_sentences_equal_datatrove_sentence_dedup(spark, tmp_path, span, min_words, min_sentences):
    docs = planted_documents() + real_documents(250_000)
    expected = _datatrove(docs, tmp_path / "datatrove", span, min_words, min_sentences)
    overrides = [
        "spans.exact_substring=null",
        f"spans.sentences.span={span}",
        f"spans.sentences.min_doc_words={min_words}",
        f"spans.sentences.min_num_sentences={min_sentences}",
    ]
    counts, kept, too_short, removed = run_stage(spark, tmp_path, docs, overrides)
    texts = dict(docs)
    changed = {d for d, t in expected.items() if t != texts[d]}
    assert len(changed) >= 5 and len(texts) - len(expected) >= 2, "too few cases to compare anything"
    if (span, min_words, min_sentences) == (3, 50, 3):  # the planted cases do what they were planted for
        assert {40, 41, 45, 48}.isdisjoint(expected)  # internal repeats; too short (words, sentences); empty
        assert {-7, 43, 50} <= changed
    assert kept == expected
    assert too_short == set(texts) - set(expected)
    for row in removed:
        assert row["kind"] == "sentences" and row["copies"] >= 2
        assert (row["kept_doc_id"], row["kept_start"]) < (row["doc_id"], row["end"])
    assert {row["doc_id"] for row in removed} >= changed
    figures = counts["sources"].values()
    assert sum(row["read"] for row in figures) == len(docs)
    assert sum(row["spans_too_short"] for row in figures) == len(too_short)
    assert all(row["read"] == row["documents"] + row["spans_too_short"] + row["spans_emptied"] for row in figures)
    cut = sum(len(texts[d].encode()) - len(expected[d].encode()) for d in changed)
    assert cut <= sum(row["removed_bytes"]["sentences"] for row in figures)


@pytest.mark.spark
def test_both_parts_sentences_then_exact_substrings_and_explain_shows_them(spark, tmp_path):
    from pipeline.spans.explain_spans import OPEN, document_spans, format_spans, sample_spans
    from tests.spans_oracle import oracle_ranges, oracle_text

    docs = planted_documents() + real_documents(120_000)
    after_sentences = _datatrove(docs, tmp_path / "datatrove", 3, 50, 3)
    ranges = oracle_ranges(sorted(after_sentences.items()), 50)  # the exact part reads what datatrove kept
    expected = {d: oracle_text(t, ranges.get(d, [])) for d, t in after_sentences.items()}
    emptied = {d for d, t in expected.items() if d in ranges and not t.strip()}
    overrides = ["spans.exact_substring.min_tokens=50", "spans.sentences.span=3"]
    counts, kept, too_short, removed = run_stage(spark, tmp_path, docs, overrides)
    assert kept == {d: t for d, t in expected.items() if d not in emptied}
    assert too_short == {d for d, _ in docs} - set(after_sentences)
    exact = {}
    for row in removed:
        if row["kind"] == "exact_substring":
            exact.setdefault(row["doc_id"], []).append((row["start"], row["end"]))
    assert {d: sorted(r) for d, r in exact.items()} == ranges
    figures = counts["sources"].values()
    assert all(row["read"] == row["documents"] + row["spans_too_short"] + row["spans_emptied"] for row in figures)
    assert all(set(row["removed_bytes"]) == {"sentences", "exact_substring"} for row in figures)

    run = str(tmp_path / "run")
    texts = dict(docs)
    both = next(d for d in sorted(ranges) if any(r["doc_id"] == d and r["kind"] == "sentences" for r in removed))
    info = document_spans(run, both)
    assert info is not None and info["after"] == kept.get(both)
    assert {r["kind"] for r in info["removed"]} == {"sentences", "exact_substring"}
    for row in info["removed"]:  # each removed span is shown marked, from the text its offsets refer to
        source = after_sentences[both] if row["offsets_in"] == "after_sentences" else texts[both]
        span = source.encode()[row["start"] : row["end"]].decode("utf-8", "replace")
        assert row["offsets_in"] == ("after_sentences" if row["kind"] == "exact_substring" else "survivor")
        assert " ".join(f"{OPEN}{span[:100]}".split()) in row["marked"]
    assert any(line.startswith("spans stage: passed on") for line in format_spans(info))
    assert document_spans(run, 41)["status"] == "too_short"
    from pipeline.spans.report_section import report_section

    section = report_section(run, counts)["spans"]
    assert {kind for row in section["removed_bytes"].values() for kind in row} == {"sentences", "exact_substring"}
    assert sum(section["too_short"].values()) == len(too_short)
    assert {row["kind"] for row in section["most_repeated"]} >= {"sentences"}
    for row in section["most_repeated"]:
        assert row["copies"] >= 2 and row["text"]
        drawn = sample_spans(run, 3, seed=1)
    assert len(drawn) == 3 and all(row["removed"] for row in drawn)
    for row in drawn:
        assert row["before"][:50] == texts[row["doc_id"]][:50]
        assert row["after"] is None or row["after"][:50] == kept[row["doc_id"]][:50]
