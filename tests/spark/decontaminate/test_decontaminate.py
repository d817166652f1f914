"""Decontamination against benchmarks (issue #17): planted passages are found and attributed per
reference, near misses (12 shared words with 13-grams) are kept, broadcast and join paths agree."""

from __future__ import annotations

import json
import random

import numpy as np
import pyarrow.parquet as pq
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.decontaminate.ngrams import ReferenceTable, contamination, ngram_hashes, word_ngrams
from pipeline.run.accounting import AccountingError, account
from pipeline.run.registry import STAGES, stage
from tests.index_corpus import random_doc, write_jsonl


def test_ngrams_are_lower_cased_words_split_on_non_word_characters():
    assert word_ngrams("The CAT, sat-on the mat!", 3) == ["the cat sat", "cat sat on", "sat on the", "on the mat"]
    assert word_ngrams("too short", 3) == []
    hashes, grams = ngram_hashes("a b c a b c", 2)
    expected = {xxhash.xxh3_64_intdigest(g.encode()): g for g in ("a b", "b c", "c a")}
    assert sorted(hashes.tolist()) == sorted(expected) and len(hashes) == 3
    assert all(expected[h] == g for h, g in zip(hashes.tolist(), grams, strict=True))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 40), max_size=30), min_size=1, max_size=4),
    st.lists(st.integers(0, 40), max_size=30),
    st.integers(1, 4),
)
def test_reference_table_lookup_matches_plain_set_intersection(refs, doc, min_matches):
    names = [f"r{i}" for i in range(len(refs))]
    hashes = np.array([h for r in refs for h in r], np.uint64)
    owners = np.array([i for i, r in enumerate(refs) for _ in r], np.int32)
    table = ReferenceTable(hashes, owners, names)
    doc_hashes = np.unique(np.array(doc, np.uint64))
    got = {r: set(v.tolist()) for r, v in table.matches(doc_hashes).items()}
    want = {i: set(doc) & set(r) for i, r in enumerate(refs) if set(doc) & set(r)}
    assert got == want
    best = contamination(doc_hashes, table, min_matches)
    eligible = {i: len(s) for i, s in want.items() if len(s) >= min_matches}
    if not eligible:
        assert best is None
    else:
        top = max(eligible.values())
        assert best[0] == min(i for i, n in eligible.items() if n == top) and best[1] == top
        assert best[2] in want[best[0]]


def test_accounting_counts_contaminated_and_earlier_run_duplicates():
    """The dedup stage's recorded counts, read back through its registered tally, enter the equation."""
    ingest = stage("ingest").result({"sources": {"web": {"documents_read": 10, "rejected": 1, "documents": 9}}})
    dedup = {
        "web": {
            "documents": 9,
            "duplicates_removed": 2,
            "contaminated": 3,
            "duplicates_of_earlier_runs": 1,
            "survivors": 3,
        }
    }
    merged = stage("merge-blend").result({"merge": {"sources": {"web": {"documents": 3, "published": True}}}})
    table = account(STAGES, {r.stage: r for r in (ingest, stage("dedup").result({"sources": dedup}), merged)})
    assert table["web"]["contaminated"] == 3 and table["web"]["duplicates_of_earlier_runs"] == 1
    dedup["web"]["contaminated"] = 2
    with pytest.raises(AccountingError, match="contaminated 2"):
        account(STAGES, {r.stage: r for r in (ingest, stage("dedup").result({"sources": dedup}), merged)})
    del dedup["web"]["contaminated"], dedup["web"]["duplicates_of_earlier_runs"]  # a run without them: old equation
    with pytest.raises(AccountingError, match=r"removed 2 \+ survivors 3"):
        account(STAGES, {r.stage: r for r in (ingest, stage("dedup").result({"sources": dedup}), merged)})


BENCH_A = (
    "Which of the following best describes the primary function of mitochondria in a eukaryotic "
    "cell during aerobic respiration and energy production"
)
BENCH_B = (
    "Natalia sold clips to forty eight of her friends in April and then she sold half as many "
    "clips in May how many clips did she sell altogether"
)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Documents with planted benchmark passages (some re-cased and re-punctuated), near misses, clean ones."""
    root = tmp_path_factory.mktemp("decon")
    rng = random.Random(5)
    words_a, words_b = BENCH_A.split(), BENCH_B.split()
    docs, expected = [], {}

    def add(text: str, reference: str | None) -> None:
        docs.append(text)
        expected[text] = reference

    for i in range(4):  # 13 consecutive words of A inside other text, upper-cased and with punctuation
        passage = " ".join(words_a[i : i + 13]).upper().replace(" ", ", ", 1)
        add(f"{random_doc(rng, 40)} {passage} {random_doc(rng, 40)}", "bench-a")
    for i in range(3):
        add(f"{random_doc(rng, 30)} {' '.join(words_b[i : i + 20])} {random_doc(rng, 30)}", "bench-b")
    for i in range(5):  # near misses: 12 consecutive reference words, then a word not in the reference
        add(f"{random_doc(rng, 40)} {' '.join(words_a[i : i + 12])} zzzz {random_doc(rng, 40)}", None)
    add(f"{' '.join(words_b[:12])} q {' '.join(words_b[12:24])}", None)  # two 12-word halves: no shared 13-gram
    for _ in range(20):
        add(random_doc(rng, 80), None)
    write_jsonl(root / "in" / "docs.jsonl", docs)
    write_jsonl(root / "refs" / "a.jsonl", [BENCH_A, "short text"])
    (root / "refs" / "b.jsonl").write_text(json.dumps({"question": BENCH_B}) + "\n{not json\n")
    return root, expected


def _config(root, out_name, overrides=()):
    from pipeline.config import load_config_text

    text = f"""
output: {root / out_name}
sources:
  - name: web
    paths: [{root / "in" / "docs.jsonl"}]
decontaminate:
  references:
    - name: bench-a
      paths: [{root / "refs" / "a.jsonl"}]
    - name: bench-b
      paths: [{root / "refs" / "b.jsonl"}]
      text_field: question
tokenizer:
  train: true
"""
    return load_config_text(text, list(overrides))


def _run_dedup(spark, root, out_name, overrides=()):
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext

    ctx = RunContext(_config(root, out_name, overrides), spark=spark)
    run_stages(ctx, only="ingest", log=lambda *_: None)
    return run_stages(ctx, only="dedup", log=lambda *_: None)["dedup"].counts


@pytest.mark.spark
@pytest.mark.parametrize("path", ["broadcast", "join"])
def test_planted_passages_are_removed_per_reference_and_near_misses_kept(spark, planted, path, monkeypatch):
    import pipeline.decontaminate.spark.step as step

    root, expected = planted
    if path == "join":
        monkeypatch.setattr(step, "BROADCAST_NGRAMS", 0)
    counts = _run_dedup(spark, root, f"run-{path}")
    run = root / f"run-{path}"
    rows = pq.read_table(run / "dedup" / "contaminated").to_pylist()
    docs = {r["doc_id"]: r["text"] for r in pq.read_table(run / "documents").to_pylist()}
    found = {docs[r["doc_id"]]: r["reference"] for r in rows}
    assert found == {t: ref for t, ref in expected.items() if ref is not None}
    assert {r["reason"] for r in rows} == {"contaminated"}
    for r in rows:  # the example n-gram really is 13 lower-cased words of the reference
        assert len(r["ngram"].split()) == 13
        assert r["ngram"] in (BENCH_A if r["reference"] == "bench-a" else BENCH_B).lower()
    assert counts["contaminated"] == 7 and counts["sources"]["web"]["contaminated"] == 7
    assert counts["documents"] == counts["contaminated"] + counts["duplicates_removed"] + counts["survivors"]
    survivors = {r["text"] for r in pq.read_table(run / "dedup" / "survivors").to_pylist()}
    assert survivors == {t for t, ref in expected.items() if ref is None}
    report = json.loads((run / "dedup" / "report.json").read_text())["decontamination"]
    assert report["lookup"] == path
    a, b = report["references"]["bench-a"], report["references"]["bench-b"]
    assert (a["documents_removed"], b["documents_removed"]) == (4, 3)
    assert a["short_texts"] == 1 and b["rejected"] == 1 and a["texts"] == 2 and b["texts"] == 1
    assert 0 < len(a["examples"]) <= 3 and all(len(e["ngram"].split()) == 13 for e in a["examples"])


@pytest.mark.spark
def test_min_matches_counts_distinct_shared_ngrams(spark, planted):
    root, expected = planted
    counts = _run_dedup(spark, root, "run-min3", ["decontaminate.min_matches=3"])
    rows = pq.read_table(root / "run-min3" / "dedup" / "contaminated").to_pylist()
    # bench-a passages share exactly 13 words = 1 13-gram; bench-b passages share 20 words = 8 13-grams
    assert {r["reference"] for r in rows} == {"bench-b"} and all(r["matches"] == 8 for r in rows)
    assert counts["contaminated"] == 3


@pytest.mark.spark
def test_a_reference_matching_no_file_names_its_own_key(spark, planted):
    from pipeline.config import ConfigError
    from pipeline.decontaminate.spark.step import read_references
    from pipeline.stage_api.context import RunContext

    root, _ = planted
    config = _config(root, "run-missing", [f"decontaminate.references.1.paths=[{root / 'refs' / 'none.jsonl'}]"])
    with pytest.raises(ConfigError) as err:
        read_references(RunContext(config, spark=spark))
    assert err.value.key == "decontaminate.references.1.paths.0" and "no input files match" in str(err.value)


@pytest.mark.spark
def test_explain_and_sample_name_contamination(spark, planted):
    """``explain`` says a contaminated document was removed as such, with its reference, and ``sample --removed``
    draws contaminated documents too (issue #28, 14)."""
    from pipeline.cli.explain import explain, format_explanation, sample

    root, _ = planted
    _run_dedup(spark, root, "run-explain")
    run = str(root / "run-explain")
    rows = pq.read_table(root / "run-explain" / "dedup" / "contaminated").to_pylist()
    for row in rows:
        info = explain(run, row["doc_id"])
        assert (info["status"], info["removed_as"]) == ("removed", "contaminated")
        assert info["evidence"]["reference"] == row["reference"] and info["evidence"]["matches"] == row["matches"]
        assert f"removed as contaminated: detail {row['detail']}" in format_explanation(info)
    drawn = sample(run, "removed", 1000)
    assert {r["doc_id"] for r in drawn if r.get("reason") == "contaminated"} == {r["doc_id"] for r in rows}
