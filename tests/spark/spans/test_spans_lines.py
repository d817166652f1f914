"""The spans stage's line part (docs/spans.md, Lines) against tests/spans_lines_oracle.py (CCNet's line dedup,
first copy kept, as plain Python over the whole corpus) on Python's documentation sources with planted cases:
the kept texts, the removed rows, the documents left too short and the accounting; hash collisions forced."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.spans.stage import line_pass
from tests.spans_lines_oracle import oracle_lines
from tests.spans_oracle import oracle_ranges, oracle_text, real_documents
from tests.spans_stage_run import run_stage

REPO = Path(__file__).resolve().parents[3]
NAV = "Home | About | Contact | Archive 2021"
CAFE = "Cafe au lait, sil vous plait"  # the same as "Café au lait, s’il vous plaît": accents and ’ go
COOKIE = "Cookie notice: we use cookies.」"  # 」 is CCNet punctuation: removed; ASCII : and . stay


def planted_documents() -> list[tuple[int, str]]:
    """A navigation line in many documents (case and digits differ, which normalization ignores), a line
    repeated inside one document, a document made only of repeated lines (left too short), blank and
    whitespace lines everywhere (never removed), unicode punctuation and accents that normalize away, ASCII
    punctuation that does not, a line seen exactly twice, CRLF line ends, first and last lines dropped."""
    return [
        (-3, f"{NAV}\nThe first document by id keeps every line.\n\n   \nCafé au lait, s’il vous plaît\n"),
        (
            4,
            "home | about | contact | archive 1999\nA page of its own.\n\n\t\nTwice seen line.\n" + CAFE,
        ),
        (
            5,
            "Cookie notice: we use cookies.\nbody text of five\nCOOKIE NOTICE: WE USE COOKIES.\n\n" + COOKIE,
        ),
        (6, f"{NAV.upper()}\nCookie notice: we use cookies.\r\nHOME | ABOUT | CONTACT | ARCHIVE 2022\n   "),
        (7, "Twice seen line.\nCookie notice: we use cookies.\r\nHello, world."),
        (8, "Hello, world\nHello, world…\n\n\n"),
        (9, f"{NAV}\n\n  \nCookie notice: we use cookies.\n\n"),  # nothing of its own: too short
        (10, ""),
        (11, "\n\n\n"),
        (12, "unique first line\nhome | about | contact | archive 0000"),  # the last line goes with its newline
        (13, f"thirteen has one line of its own\n{NAV}\n{COOKIE}"),  # two last lines go: the newline before each
    ]


def _rows_by_doc(removed: list[dict], kind: str = "lines") -> dict[int, list[tuple[int, int, int, int, int]]]:
    out: dict[int, list[tuple[int, int, int, int, int]]] = {}
    for r in removed:
        if r["kind"] == kind:
            out.setdefault(r["doc_id"], []).append(
                (r["start"], r["end"], r["copies"], r["kept_doc_id"], r["kept_start"])
            )
    return {d: sorted(rows) for d, rows in out.items()}


@pytest.mark.spark
# (3, 0): the lines plan of (2, 400_000) with another threshold, on the planted documents alone (same_plan)
@pytest.mark.parametrize(("min_repeats", "real_bytes"), [(2, 400_000), pytest.param(3, 0, marks=pytest.mark.same_plan)])
def test_lines_equal_the_oracle_and_the_accounting_holds(spark, tmp_path, min_repeats, real_bytes):
    docs = planted_documents() + (real_documents(real_bytes) if real_bytes else [])
    expected, expected_short, expected_rows = oracle_lines(docs, min_repeats)
    overrides = ["spans.exact_substring=null", f"spans.lines.min_repeats={min_repeats}"]
    counts, kept, too_short, removed = run_stage(spark, tmp_path, docs, overrides)
    texts = dict(docs)
    if min_repeats == 2:  # the planted cases do what they were planted for
        assert expected_short >= {9} and {10, 11}.isdisjoint(expected_rows)
        assert -3 not in expected_rows and {4, 5, 6, 7, 8, 12} <= set(expected_rows)
        assert expected[4] == "A page of its own.\n\n\t\nTwice seen line."
        assert expected[5] == "Cookie notice: we use cookies.\nbody text of five\n"
        assert (
            expected[8] == "Hello, world\n\n\n"
            and expected[12] == "unique first line"
            and expected[13] == "thirteen has one line of its own"
        )
        assert expected[7] == "Hello, world."  # ASCII punctuation is not normalized away
        if real_bytes:
            assert sum(len(v) for k, v in expected_rows.items() if k >= 1000) > 100, "too few real repeats"
    else:  # seen twice: kept at 3; cookie line (5 copies) and navigation line (5) still go
        assert "Twice seen line." in expected[7] and {5, 6, 9, 12} <= set(expected_rows)
    assert kept == expected
    assert too_short == expected_short
    assert _rows_by_doc(removed) == expected_rows
    assert all(r["kind"] == "lines" for r in removed)
    figures = counts["sources"].values()
    assert sum(row["read"] for row in figures) == len(docs)
    assert sum(row["spans_too_short"] for row in figures) == len(too_short)
    assert all(row["read"] == row["documents"] + row["spans_too_short"] + row["spans_emptied"] for row in figures)
    for d in set(expected_rows) - too_short:  # the rows of a document are exactly the bytes cut from it
        assert len(texts[d].encode()) - len(kept[d].encode()) == sum(e - s for s, e, *_ in expected_rows[d])
    assert sum(row["removed_bytes"]["lines"] for row in figures) == sum(
        e - s for rows in expected_rows.values() for s, e, *_ in rows
    )
    assert sum(row["removed_ranges"]["lines"] for row in figures) == sum(len(v) for v in expected_rows.values())


@pytest.mark.spark
# the second hash: the same line_pass plan as the first, only other hash values (same_plan)
@pytest.mark.parametrize(
    "hash_of", [lambda norm: 7, pytest.param(lambda norm: len(norm) % 3, marks=pytest.mark.same_plan)]
)
def test_colliding_hashes_remove_nothing_more(spark, hash_of):
    """Every line (or every line of one length class) gets one hash: grouped on the bytes too, the stage still
    drops exactly the oracle's lines; lines that only share a hash stay."""
    docs = planted_documents() + real_documents(60_000)
    expected, expected_short, _ = oracle_lines(docs, 2)
    sources = ("web", "wiki", "forum")
    frame = spark.createDataFrame(
        [(d, sources[i % 3], t) for i, (d, t) in enumerate(docs)], "doc_id long, source string, text string"
    )
    from pipeline.config.schema import LinesConfig

    rows = line_pass(frame, LinesConfig(min_repeats=2), hash_of).collect()
    assert {r["doc_id"]: r["text"] for r in rows if not r["too_short"]} == expected
    assert {r["doc_id"] for r in rows if r["too_short"]} == expected_short


@pytest.mark.spark
def test_lines_then_exact_substrings_and_explain_report_sample_show_them(spark, tmp_path):
    from pipeline.spans.explain_spans import OPEN, document_spans, format_spans, sample_spans
    from pipeline.spans.report_section import report_section

    docs = planted_documents() + real_documents(100_000)
    after_lines, too_short_expected, line_rows = oracle_lines(docs, 2)
    ranges = oracle_ranges(sorted(after_lines.items()), 50)  # the exact part reads what the line part kept
    expected = {d: oracle_text(t, ranges.get(d, [])) for d, t in after_lines.items()}
    emptied = {d for d, t in expected.items() if d in ranges and not t.strip()}
    overrides = ["spans.exact_substring.min_tokens=50", "spans.lines.min_repeats=2"]
    counts, kept, too_short, removed = run_stage(spark, tmp_path, docs, overrides)
    assert kept == {d: t for d, t in expected.items() if d not in emptied}
    assert too_short == too_short_expected
    exact = {}
    for row in removed:
        if row["kind"] == "exact_substring":
            exact.setdefault(row["doc_id"], []).append((row["start"], row["end"]))
    assert {d: sorted(r) for d, r in exact.items()} == ranges
    assert _rows_by_doc(removed) == line_rows
    figures = counts["sources"].values()
    assert all(row["read"] == row["documents"] + row["spans_too_short"] + row["spans_emptied"] for row in figures)
    assert all(set(row["removed_bytes"]) == {"lines", "exact_substring"} for row in figures)

    run = str(tmp_path / "run")
    texts = dict(docs)
    both = next(d for d in sorted(ranges) if d in line_rows)
    info = document_spans(run, both)
    assert info is not None and info["after"] == kept.get(both)
    assert {r["kind"] for r in info["removed"]} == {"lines", "exact_substring"}
    for row in info["removed"]:  # each removed span is shown marked, from the text its offsets refer to
        assert row["offsets_in"] == ("after_lines" if row["kind"] == "exact_substring" else "survivor")
        source = after_lines[both] if row["offsets_in"] == "after_lines" else texts[both]
        span = source.encode()[row["start"] : row["end"]].decode("utf-8", "replace")
        assert " ".join(f"{OPEN}{span[:100]}".split()) in row["marked"]
    assert any(line.startswith("spans stage: passed on") for line in format_spans(info))
    assert document_spans(run, 9)["status"] == "too_short"
    section = report_section(run, counts)["spans"]
    assert sum(section["too_short"].values()) == len(too_short)
    lines_shown = [row for row in section["most_repeated"] if row["kind"] == "lines"]
    assert lines_shown and all(row["copies"] >= 2 and row["text"] for row in lines_shown)
    drawn = sample_spans(run, 3, seed=1)
    assert len(drawn) == 3 and all(row["removed"] for row in drawn)
    for row in drawn:
        assert row["before"][:50] == texts[row["doc_id"]][:50]
        assert row["after"] is None or row["after"][:50] == kept[row["doc_id"]][:50]


@pytest.mark.spark
def test_all_three_parts_lines_then_datatrove_sentences_then_exact_substrings(spark, tmp_path):
    """Lines (the oracle), then datatrove's SentenceDedup on what they kept, then the suffix-array oracle on what
    it kept: the stage's texts, removals and rows, and explain reads each row's text from the table it names."""
    from pipeline.spans.explain_spans import document_spans
    from tests.spark.spans.test_spans_sentences import A, _datatrove
    from tests.spark.spans.test_spans_sentences import planted_documents as sentence_documents

    parts = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh")
    own = " ".join(f"This document goes on with its {w} part, in words of its own to stay long." for w in parts)
    both = (600, f"{NAV}\nA line of its own.\n" + A + own)  # a line dropped before a repeated sentence run
    docs = planted_documents() + [(d + 500, t) for d, t in sentence_documents()] + [both] + real_documents(80_000)
    after_lines, short_lines, line_rows = oracle_lines(docs, 2)
    after_sentences = _datatrove(sorted(after_lines.items()), tmp_path / "datatrove", 3, 50, 3)
    ranges = oracle_ranges(sorted(after_sentences.items()), 50)
    expected = {d: oracle_text(t, ranges.get(d, [])) for d, t in after_sentences.items()}
    emptied = {d for d, t in expected.items() if d in ranges and not t.strip()}
    overrides = ["spans.exact_substring.min_tokens=50", "spans.sentences.span=3", "spans.lines.min_repeats=2"]
    counts, kept, too_short, removed = run_stage(spark, tmp_path, docs, overrides)
    assert short_lines and set(after_lines) - set(after_sentences), "no document left too short by each part"
    assert kept == {d: t for d, t in expected.items() if d not in emptied}
    assert too_short == short_lines | (set(after_lines) - set(after_sentences))
    assert _rows_by_doc(removed) == line_rows
    assert {d: sorted(r[:2] for r in rows) for d, rows in _rows_by_doc(removed, "exact_substring").items()} == ranges
    figures = counts["sources"].values()
    assert all(row["read"] == row["documents"] + row["spans_too_short"] + row["spans_emptied"] for row in figures)
    assert all(set(row["removed_bytes"]) == {"lines", "sentences", "exact_substring"} for row in figures)
    texts = {"survivor": dict(docs), "after_lines": after_lines, "after_sentences": after_sentences}
    where = {"lines": "survivor", "sentences": "after_lines", "exact_substring": "after_sentences"}
    sentence_docs = sorted({r["doc_id"] for r in removed if r["kind"] == "sentences"} & set(after_sentences))
    assert 600 in sentence_docs and 600 in line_rows
    for doc_id in [600, *sentence_docs[:3]]:
        info = document_spans(str(tmp_path / "run"), doc_id)
        assert info is not None
        for row in info["removed"]:
            assert row["offsets_in"] == where[row["kind"]]
            span = texts[row["offsets_in"]][doc_id].encode()[row["start"] : row["end"]].decode("utf-8", "replace")
            assert " ".join(span[:100].split()) in row["marked"]
