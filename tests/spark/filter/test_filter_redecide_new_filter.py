"""Re-deciding with new filters or a changed measure (docs/stages.md, Re-deciding from the signals): a finished
sample run (conf/local.yaml) without the language and fineweb filters gets both back; only those two are measured
(alone, over the documents: fineweb after C4's rewriting), the others are re-decided from their columns, and the
result equals a fresh run with the full list (the Megatron files byte for byte, the filter tables row for row).
Then fineweb's ``stop_chars`` (a measure option) changes on that run: fineweb alone is measured again, and the result
equals a fresh run with that option."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from pipeline.stage_api import layout
from tests.spark.filter.test_filter_redecide import _megatron, _rows, _run

pytestmark = pytest.mark.spark
FULL = [
    "{name: language, languages: [en], min_score: 0.65}",
    "{name: gopher_repetition}",
    "{name: gopher_quality, max_non_alpha_words_ratio: 0.6}",  # conf/local.yaml's list: the sample run's
    "{name: c4}",
    "{name: fineweb}",
    "{name: pii}",
]
STOPS = "{name: fineweb, stop_chars: [.]}"


def _filters(*, without: tuple[str, ...] = (), fineweb: str = "{name: fineweb}") -> str:
    entries = [fineweb if "fineweb" in e else e for e in FULL if not any(f"name: {w}" in e for w in without)]
    return "filter=[" + ", ".join(entries) + "]"


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture(scope="module")
def runs(spark, sample_run, tmp_path_factory):
    """A run without language and fineweb given both back, then fineweb's option changed; the fresh runs to compare
    with (the full list's: a copy of the session's sample run, which has it)."""
    base = tmp_path_factory.mktemp("redecide-new")
    lines = _Lines()
    logger = logging.getLogger("pipeline.filter")
    logger.addHandler(lines)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        first = _run(spark, base / "added", _filters(without=("language", "fineweb")))
        assert first["decision"] == "measured"
        del lines.lines[:]
        added = _run(spark, base / "added", _filters(), force="filter")
        added_log = list(lines.lines)
        shutil.copytree(sample_run.path, base / "fresh")
        fresh = sample_run.results["filter"].counts
        shutil.copytree(base / "added", base / "stops")
        del lines.lines[:]
        stops = _run(spark, base / "stops", _filters(fineweb=STOPS), force="filter")
        stops_log = list(lines.lines)
        fresh_stops = _run(spark, base / "fresh-stops", _filters(fineweb=STOPS))
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)
    return {
        "base": base,
        "added": added,
        "added_log": added_log,
        "fresh": fresh,
        "stops": stops,
        "stops_log": stops_log,
        "fresh_stops": fresh_stops,
    }


def _same_as_fresh(base: Path, run: str, fresh: str) -> None:
    assert _megatron(base / run) == _megatron(base / fresh)
    for table in (layout.FILTERED, layout.FILTER_DROPPED):
        assert _rows(base / run, table) == _rows(base / fresh, table), table
    summary = [json.loads((base / r / layout.FILTER_SUMMARY).read_text()) for r in (run, fresh)]
    assert summary[0] == summary[1]
    assert not (base / run / "filter" / "_previous").exists()


def _signals(run: Path) -> list[dict]:
    return ds.dataset(run / layout.FILTER_SIGNALS, format="parquet").to_table().to_pylist()


def test_new_filters_are_measured_alone_and_the_result_equals_a_fresh_run(runs):
    base = runs["base"]
    assert runs["added"]["decision"] == "re-decided from filter/signals/; measured language, fineweb"
    assert runs["fresh"]["decision"] == "measured"
    assert runs["added"]["sources"] == runs["fresh"]["sources"]
    _same_as_fresh(base, "added", "fresh")
    said = [line for line in runs["added_log"] if line.startswith("filter: re-deciding")]
    assert said == [
        "filter: re-deciding from filter/signals/ (c4, gopher_quality, gopher_repetition, pii from their columns; "
        "measuring language alone (new for source web); measuring fineweb alone (new for source web))"
    ]
    assert not any("measuring every document" in line for line in runs["added_log"])
    # measured alone: fineweb took its measures of documents gopher_quality dropped (those C4 keeps; a fresh run's
    # fineweb never sees them), and language of every document
    dropped = {
        r["doc_id"]
        for r in ds.dataset(base / "added" / layout.FILTER_DROPPED).to_table().to_pylist()
        if r["reason"].startswith("gopher_quality.")
    }
    assert dropped
    rows = {r["doc_id"]: r for r in _signals(base / "added")}
    assert any(rows[d]["fineweb.lines"] is not None for d in dropped)
    assert all(r["language.label"] is not None for r in rows.values())
    fresh = {r["doc_id"]: r for r in _signals(base / "fresh")}
    assert all(fresh[d]["fineweb.lines"] is None for d in dropped)
    for doc, row in fresh.items():  # where the fresh run measured, the same values
        for column, value in row.items():
            if value is not None and value == value:
                assert rows[doc][column] == value, (doc, column)


def test_a_changed_measure_option_measures_that_filter_alone(runs):
    assert runs["stops"]["decision"] == "re-decided from filter/signals/; measured fineweb"
    said = [line for line in runs["stops_log"] if line.startswith("filter: re-deciding")]
    assert said and "measuring fineweb alone (measures differently for source web)" in said[0]
    assert "language" in said[0].split(";")[0]
    assert runs["stops"]["sources"] == runs["fresh_stops"]["sources"]
    assert runs["stops"]["sources"] != runs["added"]["sources"]  # the option changes what fineweb drops
    _same_as_fresh(runs["base"], "stops", "fresh-stops")


def _spoil_text(table: Path) -> None:
    """Overwrite every ``text`` column chunk of the table's Parquet files in place (same sizes: the same table to
    the signals' record), so that reading a document's text fails."""
    import pyarrow.parquet as pq

    for part in sorted(table.glob("*.parquet")):
        meta = pq.ParquetFile(part).metadata
        at = meta.schema.to_arrow_schema().get_field_index("text")
        chunks = []
        for g in range(meta.num_row_groups):
            column = meta.row_group(g).column(at)
            start = column.dictionary_page_offset or column.data_page_offset
            chunks.append((start, column.total_compressed_size))
        with open(part, "r+b") as handle:
            for start, size in chunks:
                handle.seek(start)
                handle.write(b"\xff" * size)


def test_a_changed_threshold_reads_no_text_but_the_kept_documents(runs, spark):
    """min_doc_words 50 -> 120 on a run whose documents' text cannot be read: decided from the columns alone (the
    documents table is not read at all here: nothing is measured again), the new drops' excerpts are the start of
    the text as read (filter/signals/' excerpt)."""
    from pipeline.run.registry import FILTER, INGEST
    from pipeline.run.runner import run_stages
    from pipeline.stage_api.context import RunContext
    from tests.sample_runs import REPO, sample_config

    base = runs["base"]
    shutil.copytree(base / "fresh", base / "spoiled")
    texts = {r["doc_id"]: r["text"] for r in ds.dataset(base / "fresh" / layout.DOCUMENTS).to_table().to_pylist()}
    _spoil_text(base / "spoiled" / layout.DOCUMENTS)
    with pytest.raises(Exception):  # noqa: B017 (whatever pyarrow raises on a spoiled page)
        ds.dataset(base / "spoiled" / layout.DOCUMENTS).to_table(columns=["text"])
    tighter = _filters().replace("ratio: 0.6}", "ratio: 0.6, min_doc_words: 120}")
    ctx = RunContext(sample_config(base / "spoiled", [tighter]), spark=spark)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        counts = run_stages(ctx, force="filter", stages=(INGEST, FILTER), log=lambda *_: None)["filter"].counts
    assert counts["decision"] == "re-decided from filter/signals/"
    before = {
        r["doc_id"]: r["reason"] for r in ds.dataset(base / "fresh" / layout.FILTER_DROPPED).to_table().to_pylist()
    }
    new = [
        r
        for r in ds.dataset(base / "spoiled" / layout.FILTER_DROPPED).to_table().to_pylist()
        if r["reason"] == "gopher_quality.gopher_short_doc" and r["doc_id"] not in before
    ]
    assert new
    for row in new:
        assert row["excerpt"] == texts[row["doc_id"]][:300]
