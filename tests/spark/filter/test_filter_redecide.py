"""Re-deciding the filter stage from ``filter/signals/`` (docs/stages.md, Re-deciding from the signals): a finished
sample run (conf/local.yaml: a copy of the session's ``sample_run``) whose ``gopher_quality.min_doc_words`` changes
(datatrove's default 50 -> 120, then 30) is re-decided from
its signals, and the result equals a fresh run with that threshold (the Megatron files byte for byte, the filter
tables row for row); a removed filter re-decides too, a new filter or a changed measure is measured alone
(tests/spark/filter/test_filter_redecide_new_filter.py), changed documents or rewriting filters measure every
document again. The signals command and the report's signals section are checked on the fresh run."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

from pipeline.filter.plan import make_plan
from pipeline.filter.redecide import anew, reuse_problem, signals_meta
from pipeline.run.runner import run_stages
from pipeline.stage_api import layout
from pipeline.stage_api.context import RunContext
from tests.sample_runs import REPO, sample_config

pytestmark = pytest.mark.spark
LOCAL = [
    "{name: language, languages: [en], min_score: 0.65}",
    "{name: gopher_repetition}",
    "{name: gopher_quality, max_non_alpha_words_ratio: 0.6, min_doc_words: %d}",
    "{name: c4}",
    "{name: fineweb}",
    "{name: pii}",
]


def _filters(min_doc_words: int, drop: str | None = None) -> str:
    entries = [e % min_doc_words if "%d" in e else e for e in LOCAL if drop is None or drop not in e]
    return "filter=[" + ", ".join(entries) + "]"


def _run(spark, out: Path, *sets: str, force: str | None = None) -> dict:
    ctx = RunContext(sample_config(out, list(sets)), spark=spark)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        results = run_stages(ctx, force=force, log=lambda *_: None)
    return results["filter"].counts


def _megatron(run: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((run / "megatron").iterdir())}


def _rows(run: Path, table: str) -> list[str]:
    rows = ds.dataset(run / table, format="parquet", exclude_invalid_files=True).to_table().to_pylist()
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


@pytest.fixture(scope="module")
def runs(spark, sample_run, tmp_path_factory):
    """The session's sample run (min_doc_words at datatrove's 50) re-decided on a copy, and the fresh runs."""
    base = tmp_path_factory.mktemp("redecide")
    first = sample_run.results["filter"].counts  # the sample run is this file's first run
    assert first["decision"] == "measured"
    shutil.copytree(sample_run.path, base / "redecided")
    again = _run(spark, base / "redecided", _filters(120), force="filter")
    fresh = _run(spark, base / "fresh", _filters(120))
    shutil.copytree(base / "redecided", base / "loosened")  # then down to 30: documents dropped before are kept
    loosened = _run(spark, base / "loosened", _filters(30), force="filter")
    fresh_loose = _run(spark, base / "fresh-loose", _filters(30))
    return {"base": base, "first": first, "again": again, "fresh": fresh, "loosened": loosened, "loose": fresh_loose}


def test_a_changed_threshold_re_decides_and_equals_a_fresh_run(runs):
    base = runs["base"]
    assert runs["again"]["decision"] == "re-decided from filter/signals/"
    assert runs["fresh"]["decision"] == "measured"
    assert runs["again"]["sources"] == runs["fresh"]["sources"]
    first = runs["first"]["sources"]
    short = sum(s["removed"].get("gopher_quality.gopher_short_doc", 0) for s in runs["again"]["sources"].values())
    assert short > sum(s["removed"].get("gopher_quality.gopher_short_doc", 0) for s in first.values())
    assert _megatron(base / "redecided") == _megatron(base / "fresh")
    for table in (layout.FILTERED, layout.FILTER_DROPPED):
        assert _rows(base / "redecided", table) == _rows(base / "fresh", table), table
    summary = [json.loads((base / run / layout.FILTER_SUMMARY).read_text()) for run in ("redecided", "fresh")]
    assert summary[0] == summary[1]
    assert not (base / "redecided" / "filter" / "_previous").exists()


def test_a_loosened_threshold_re_decides_and_equals_a_fresh_run(runs):
    base = runs["base"]
    assert runs["loosened"]["decision"] == "re-decided from filter/signals/"
    assert runs["loosened"]["sources"] == runs["loose"]["sources"]
    kept = sum(s["documents"] for s in runs["loosened"]["sources"].values())
    assert kept > sum(s["documents"] for s in runs["again"]["sources"].values())
    assert _megatron(base / "loosened") == _megatron(base / "fresh-loose")
    for table in (layout.FILTERED, layout.FILTER_DROPPED):
        assert _rows(base / "loosened", table) == _rows(base / "fresh-loose", table), table
    summary = [json.loads((base / run / layout.FILTER_SUMMARY).read_text()) for run in ("loosened", "fresh-loose")]
    assert summary[0] == summary[1]


def test_what_can_be_re_decided(runs):
    run = runs["base"] / "fresh"
    documents = str(run / layout.DOCUMENTS)
    recorded = json.loads((run / layout.FILTER_SIGNALS_META).read_text())

    def meta(filters: str) -> dict:
        return signals_meta(make_plan(sample_config(run, [filters])), documents)

    assert reuse_problem(recorded, meta(_filters(120))) is None
    assert reuse_problem(recorded, meta(_filters(10))) is None
    assert reuse_problem(recorded, meta(_filters(120, drop="fineweb"))) is None  # a filter removed: its drops undone
    assert "text-rewriting" in reuse_problem(recorded, meta(_filters(120, drop="c4")))
    other_stops = _filters(120).replace("{name: fineweb}", "{name: fineweb, stop_chars: [.]}")
    assert reuse_problem(recorded, meta(other_stops)) is None  # fineweb measured alone (tests/..._new_filter.py)
    assert anew(recorded, meta(other_stops)) == {"fineweb": "measures differently for source web"}
    assert anew(meta(_filters(120, drop="fineweb")), meta(_filters(120))) == {"fineweb": "new for source web"}
    assert anew(recorded, meta(_filters(10))) == {}
    assert "documents changed" in reuse_problem({**recorded, "input": "other"}, meta(_filters(120)))
    assert "no signals" in reuse_problem(None, meta(_filters(120)))


def test_signals_command_samples_documents_by_their_signals(runs, capsys):
    from pipeline.cli.commands import main

    run = runs["base"] / "fresh"
    assert main(["signals", str(run), "--where", "gopher_quality.word_count < 120", "-n", "5", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    table = ds.dataset(run / layout.FILTER_SIGNALS, format="parquet").to_table().to_pylist()
    matching = {r["doc_id"] for r in table if (r["gopher_quality.word_count"] or 120) < 120}
    assert len(rows) == min(5, len(matching)) and len(rows) >= 1
    dropped = {r["doc_id"]: r["reason"] for r in ds.dataset(run / layout.FILTER_DROPPED).to_table().to_pylist()}
    for row in rows:
        assert row["doc_id"] in matching and row["gopher_quality.word_count"] < 120
        assert row["decision"] == dropped.get(row["doc_id"], "kept") == "gopher_quality.gopher_short_doc"
    assert main(["signals", str(run), "--where", "gopher_quality.words < 50"]) == 2
    assert "--where" in capsys.readouterr().err


# the test's own reading of datatrove's GopherQualityFilter, as in tests/unit/filter/test_filter_signals.py
QUALITY_ORDER = [
    ("word_count", "min", 120),
    ("word_count", "max", 100000),
    ("avg_word_length", "min", 3),
    ("avg_word_length", "max", 10),
    ("hash_word_ratio", "max", 0.1),
    ("ellipsis_word_ratio", "max", 0.1),
    ("bullet_lines_ratio", "max", 0.9),
    ("end_ellipsis_lines_ratio", "max", 0.3),
    ("alpha_words_ratio", "min", 0.6),
    ("stop_words", "min", 2),
]


def _keeps(row: dict, min_doc_words: int) -> bool:
    for measure, direction, limit in QUALITY_ORDER:
        limit = min_doc_words if (measure, direction) == ("word_count", "min") else limit
        value = row[f"gopher_quality.{measure}"]
        if value is None or value != value:
            continue
        if (value < limit) if direction == "min" else (value > limit):
            return False
    return True


def test_report_draws_each_signal_and_what_other_thresholds_would_keep(runs):
    from pipeline.filter.report_section import report_section

    run = runs["base"] / "fresh"
    entry = report_section(str(run))["filter_signals"]["rules"]["gopher_quality.gopher_short_doc"]
    table = ds.dataset(run / layout.FILTER_SIGNALS, format="parquet").to_table().to_pylist()
    seen = [r for r in table if r["gopher_quality.word_count"] is not None and r["source"] == entry["source"]]
    dropped = ds.dataset(run / layout.FILTER_DROPPED).to_table().to_pylist()
    by_it = sum(1 for r in dropped if r["source"] == entry["source"] and r["reason"].startswith("gopher_quality."))
    assert (
        entry["signal"] == "gopher_quality.word_count" and entry["threshold"] == 120 and entry["documents"] == len(seen)
    )
    assert sum(entry["counts"]) + entry["overflow"] + entry["underflow"] + entry["undefined"] == len(seen)
    steps = {s["threshold"]: s["kept"] for s in entry["what_if"]}
    assert steps[120] == len(seen) - by_it  # the configured threshold: what the run kept of what the filter saw
    for threshold, kept in steps.items():
        assert kept == sum(_keeps(r, threshold) for r in seen), threshold
    html = (run / "report.html").read_text()
    assert "Filter signals" in html and "gopher_quality.gopher_short_doc" in html


def _tightened(spark, runs: dict, name: str) -> tuple[Path, dict, int]:
    """The loosened run (min_doc_words 30) copied to ``name`` and re-decided with 120 (ingest and filter only):
    the run, the filter stage's counts and how many Spark jobs the re-decision ran."""
    from pipeline.run.registry import FILTER, INGEST

    out = runs["base"] / name
    shutil.copytree(runs["base"] / "loosened", out)
    ctx = RunContext(sample_config(out, [_filters(120)]), spark=spark)
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        counts = run_stages(ctx, force="filter", stages=(INGEST, FILTER), log=lambda *_: None)["filter"].counts
    return out, counts, len(set(tracker.getJobIdsForGroup(None)) - before)


def _same_filter_tables(run: Path, fresh: Path) -> None:
    for table in (layout.FILTERED, layout.FILTER_DROPPED):
        assert _rows(run, table) == _rows(fresh, table), table
    assert json.loads((run / layout.FILTER_SUMMARY).read_text()) == json.loads(
        (fresh / layout.FILTER_SUMMARY).read_text()
    )


def test_a_small_signals_table_is_re_decided_on_the_driver_in_few_jobs(spark, runs):
    """30 -> 120 decided on the driver: no decision job, no documents table read; five jobs in all (two footers,
    the dropped ids sent to the tasks, two table writes; eleven before the driver decided)."""
    out, counts, jobs = _tightened(spark, runs, "few-jobs")
    assert counts["decision"] == "re-decided from filter/signals/"
    assert counts["sources"] == runs["fresh"]["sources"]
    _same_filter_tables(out, runs["base"] / "fresh")
    assert jobs <= 6, jobs


def test_a_large_signals_table_is_re_decided_in_spark_alike(spark, runs, monkeypatch):
    """The same re-decision with the driver's row limit below the table's rows: the Spark job decides, alike."""
    from pipeline.filter.spark import redecide

    monkeypatch.setattr(redecide, "DRIVER_ROWS", 0)
    out, counts, jobs = _tightened(spark, runs, "in-spark")
    assert counts["decision"] == "re-decided from filter/signals/"
    assert counts["sources"] == runs["fresh"]["sources"]
    _same_filter_tables(out, runs["base"] / "fresh")
    assert jobs > 6, jobs  # the decision's own jobs: it did run in Spark


def test_a_re_decision_reaching_untaken_measures_equals_a_fresh_run(spark, runs):
    """FineWeb's line rules and C4's curly bracket rule off: the documents they dropped reach ``list_ratio`` and
    ``sentences``, which the first run left untaken (null), and are measured again from their text."""
    base = runs["base"]
    signals = ds.dataset(base / "fresh" / layout.FILTER_SIGNALS, format="parquet").to_table()
    seen = signals.filter(pc.is_valid(signals["fineweb.lines"]))
    assert seen["fineweb.list_ratio"].null_count > 0
    assert signals.filter(pc.is_valid(signals["c4.lorem_ipsum_line"]))["c4.sentences"].null_count > 0
    loose = (
        _filters(120)
        .replace("{name: fineweb}", "{name: fineweb, line_punct_thr: 0, short_line_thr: 1, char_duplicates_ratio: 1}")
        .replace("{name: c4}", "{name: c4, filter_curly_bracket: false}")
    )
    shutil.copytree(base / "fresh", base / "untaken")
    again = _run(spark, base / "untaken", loose, force="filter")
    fresh = _run(spark, base / "fresh-untaken", loose)
    assert again["decision"] == "re-decided from filter/signals/"
    assert again["sources"] == fresh["sources"]
    assert _megatron(base / "untaken") == _megatron(base / "fresh-untaken")
    for table in (layout.FILTERED, layout.FILTER_DROPPED):
        assert _rows(base / "untaken", table) == _rows(base / "fresh-untaken", table), table
