"""The Filter contract (docs/stages.md, Filters): composition in order, first reason wins, rewritten text
flows on; decontamination as a Filter checked against n-gram sets the test builds itself."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest

from pipeline.decontaminate.filter import FIELDS, ContaminationFilter
from pipeline.decontaminate.ngrams import ReferenceTable, ngram_hashes
from pipeline.stage_api.filter import FilterResult, apply_filters, dropped_batches, dropped_ddl


def _batch(texts: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"doc_id": list(range(len(texts))), "source": ["web"] * len(texts), "text": texts, "extra": ["e"] * len(texts)}
    )


class DropContaining:
    def __init__(self, word: str) -> None:
        self.name, self.word = f"has_{word}", word
        self.seen: list[list[str]] = []

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        texts = batch.column("text").to_pylist()
        self.seen.append(texts)
        hit = [self.word in t for t in texts]
        return FilterResult(
            np.array([not h for h in hit]),
            [self.name if h else None for h in hit],
            [f"{self.word!r} at {t.index(self.word)}" if h else None for h, t in zip(hit, texts, strict=True)],
        )


class StripDigits:
    name = "digits"

    def apply(self, batch: pa.RecordBatch) -> FilterResult:
        texts = batch.column("text").to_pylist()
        new = [re.sub(r"\d", "", t) for t in texts]
        n = len(texts)
        return FilterResult(
            np.ones(n, bool),
            [None] * n,
            [None] * n,
            pa.array(new),
            sum(a != b for a, b in zip(new, texts, strict=True)),
        )


def test_filters_compose_in_order_and_the_first_reason_wins():
    texts = ["spam 1", "ham 22", "spam and eggs", "eggs 3", "plain"]
    strip, spam, eggs = StripDigits(), DropContaining("spam"), DropContaining("eggs")
    out = apply_filters(_batch(texts), [strip, spam, eggs])
    assert out.kept.column("text").to_pylist() == ["ham ", "plain"]
    assert out.kept.column("extra").to_pylist() == ["e", "e"] and out.kept.column("doc_id").to_pylist() == [1, 4]
    dropped = out.dropped.to_pydict()
    assert dropped["doc_id"] == [0, 2, 3] and dropped["reason"] == ["has_spam", "has_spam", "has_eggs"]
    assert dropped["detail"] == ["'spam' at 0", "'spam' at 0", "'eggs' at 0"]
    assert eggs.seen == [["ham ", "eggs ", "plain"]]  # only what spam kept, with the digits already gone
    assert out.changed == {"digits": 3, "has_spam": 0, "has_eggs": 0}


def test_an_empty_result_keeps_its_schema_and_a_short_result_is_refused():
    out = apply_filters(_batch(["a", "b"]), [DropContaining("zzz")])
    assert out.dropped.num_rows == 0 and out.dropped.schema.names == ["doc_id", "source", "reason", "detail"]
    with pytest.raises(ValueError, match="one keep, reason, detail"):
        FilterResult(np.ones(2, bool), [None], [None, None])
    assert dropped_ddl(FIELDS) == (
        "doc_id long, source string, reason string, detail string, reference string, matches long, ngram string"
    )


REFS = {
    "quiz": "which planet in our solar system has the largest number of confirmed moons as of this year",
    "exam": "the mitochondria is the powerhouse of the cell and makes most of its chemical energy",
}


def _grams(text: str, n: int) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


@pytest.mark.parametrize("min_matches", [1, 3, 6])
def test_decontamination_filter_drops_by_shared_ngrams(min_matches):
    n = 4
    names = list(REFS)
    hashes, refs = [], []
    for i, name in enumerate(names):
        h, _ = ngram_hashes(REFS[name], n)
        hashes.append(h)
        refs.append(np.full(len(h), i, np.int32))
    table = ReferenceTable(np.concatenate(hashes), np.concatenate(refs), names)
    docs = [
        "Quiz time! Which planet in our Solar System has the largest number of moons? Saturn.",
        "Biology notes: the mitochondria is the powerhouse of the cell and makes most energy.",
        "A recipe for bread with flour, water, salt and yeast.",
        "Which planet in our solar system has the largest number of confirmed moons as of this year",
    ]
    out = apply_filters(_batch(docs), [ContaminationFilter(table, n, min_matches)], FIELDS)
    dropped = {r["doc_id"]: r for r in out.dropped.to_pylist()}
    for i, doc in enumerate(docs):
        shared = {name: _grams(doc, n) & _grams(REFS[name], n) for name in names}
        best = max(names, key=lambda name: (len(shared[name]), -names.index(name)))
        if len(shared[best]) < min_matches:
            assert i not in dropped
            continue
        row = dropped[i]
        assert (row["reason"], row["reference"], row["matches"]) == ("contaminated", best, len(shared[best]))
        assert row["ngram"] in shared[best] and f"{len(shared[best])} distinct 4-grams" in row["detail"]
    assert {0, 1, 3} <= set(dropped) if min_matches <= 3 else 3 in dropped
    batches = list(dropped_batches([_batch(docs)], [ContaminationFilter(table, n, min_matches)], FIELDS))
    assert batches[0].to_pylist() == out.dropped.to_pylist()
