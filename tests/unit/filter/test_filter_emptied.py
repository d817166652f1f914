"""A document a filter rewrites to empty or whitespace-only text is dropped as ``<filter>.empty`` (issue 46 item 2;
docs/stages.md, The filter stage), with the issue's examples: PII with ``email_replacement: ""`` and C4 with
``min_num_sentences: 0``. What the rewritten texts are comes from datatrove 0.10.1's own filters (the oracle),
which keep such documents."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from pipeline.config import load_config_text
from pipeline.filter.batches import filter_partition, output_schema
from pipeline.filter.plan import make_plan
from pipeline.filter.rules.c4 import C4Filter
from pipeline.filter.rules.pii import PIIFilter
from pipeline.stage_api.filter import apply_filters
from tests.config_texts import config_text, write_jsonl
from tests.oracles import require_oracle

ONE_EMAIL = "someone@example.net"
TWO_EMAILS = "   first.one@example.net\n    second@example.org"
KEPT = "Write to someone@example.net for the full report."
C4_EMPTIED = ["an unpunctuated line without an end", "これは日本語の文です。これも文です。", "ภาษาไทยไม่มีจุด ครับ ครับ"]
C4_KEPT = "This line has words and a full stop. So does this one here."


def _batch(texts: list[str]) -> pa.RecordBatch:
    n = len(texts)
    return pa.RecordBatch.from_pydict(
        {"doc_id": pa.array(range(n), pa.int64()), "source": ["web"] * n, "text": pa.array(texts, pa.string())}
    )


def test_datatrove_keeps_what_it_empties() -> None:
    """The oracle: datatrove's PIIFormatter and C4QualityFilter rewrite these texts to blank ones and keep them."""
    pii = require_oracle("datatrove.pipeline.formatters.pii")
    filters = require_oracle("datatrove.pipeline.filters")
    document = require_oracle("datatrove.data").Document
    formatter = pii.PIIFormatter(email_replacement="")
    assert formatter.format(ONE_EMAIL) == "" and formatter.format(TWO_EMAILS).isspace()
    c4 = filters.C4QualityFilter(min_num_sentences=0)
    for text in C4_EMPTIED:
        doc = document(text=text, id="0")
        assert c4.filter(doc) is True and doc.text == ""


def test_pii_emptied_documents_are_dropped_as_pii_empty() -> None:
    out = apply_filters(_batch([ONE_EMAIL, TWO_EMAILS, KEPT]), [PIIFilter(email_replacement="")])
    assert out.kept.column("text").to_pylist() == ["Write to  for the full report."]
    assert out.dropped.column("reason").to_pylist() == ["pii.empty", "pii.empty"]
    assert out.dropped.column("doc_id").to_pylist() == [0, 1] and out.changed == {"pii": 3}


def test_c4_emptied_documents_are_dropped_as_c4_empty() -> None:
    out = apply_filters(_batch([*C4_EMPTIED, C4_KEPT]), [C4Filter(min_num_sentences=0)])
    assert out.kept.column("doc_id").to_pylist() == [3]
    assert out.dropped.column("reason").to_pylist() == ["c4.empty"] * 3


@pytest.mark.parametrize("text", ["", "   "])
def test_a_text_blank_before_the_filter_is_not_its_doing(text: str) -> None:
    """Ingest rejects blank text (empty_text); should one arrive, the filter that did not empty it keeps it."""
    out = apply_filters(_batch([text]), [PIIFilter(email_replacement="")])
    assert out.kept.num_rows == 1


def test_the_stage_s_batch_step_counts_and_lists_them(tmp_path) -> None:
    text = config_text(write_jsonl(tmp_path))
    config = load_config_text(text + 'filter: [{name: pii, email_replacement: ""}, {name: c4, min_num_sentences: 0}]\n')
    plan = make_plan(config)
    batch = _batch([ONE_EMAIL, TWO_EMAILS, *C4_EMPTIED, C4_KEPT])
    rows = pa.Table.from_batches(list(filter_partition(iter([batch]), plan, output_schema(batch.schema)))).to_pylist()
    dropped = {r["doc_id"]: r for r in rows if r["kind"] == "dropped"}
    assert {i: r["reason"] for i, r in dropped.items()} == {0: "pii.empty", 1: "pii.empty", 2: "c4.empty",
                                                            3: "c4.empty", 4: "c4.empty"}  # fmt: skip
    assert dropped[1]["excerpt"] == TWO_EMAILS and dropped[1]["value"] is None
    assert [r["doc_id"] for r in rows if r["kind"] == "kept"] == [5]
    summary = json.loads(next(r["summary"] for r in rows if r["kind"] == "summary"))["sources"]["web"]
    assert summary["dropped"] == {"pii.empty": 2, "c4.empty": 3} and summary["kept"] == 1 and summary["read"] == 6
