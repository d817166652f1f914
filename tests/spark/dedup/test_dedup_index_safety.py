"""A dedup index used by runs at once, or found broken (issue #28, items 4, 7, 8, 11): concurrent dated runs do
not both keep their shared documents, a commit over a HEAD that gained runs is refused and the rerun removes
them, an index path that is a file and a corrupt HEAD fail early in one line, ``index describe`` fails on a
missing generation, and ``index compact`` survives a commit landing under it."""

from __future__ import annotations

import html
import json
import random
import shutil
import threading
from pathlib import Path

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.cli.commands import describe as describe_error
from pipeline.cli.commands import main
from pipeline.config import ConfigError, load_config_text
from pipeline.dedup.index.head import DedupIndexError, read_head
from pipeline.dedup.index.spark.commit import IndexMovedError, publish
from pipeline.run import preflight
from pipeline.run.runner import run_stages
from pipeline.stage_api.context import RunContext
from tests.index_corpus import config, random_doc, run, write_jsonl
from tests.spark.dedup.test_dedup_index_storage import PARAMS, index_url  # noqa: F401  (the local / s3 / gs fixture)

SCHEMA = Path(__file__).resolve().parents[3] / "pipeline" / "report" / "schema.json"


def survivors(run_dir) -> set[str]:
    return {r["text"] for r in pq.read_table(run_dir / "dedup" / "survivors").to_pylist()}


# ---- item 4: a commit over a HEAD that gained runs its dedup did not look up


def test_racing_first_commits_on_one_index_let_exactly_one_land(index_url):  # noqa: F811
    """Four runs that looked up an empty index commit at once: the check and the conditional write are one step,
    so one lands and the three others are refused, naming the run that landed; HEAD holds the one."""
    barrier = threading.Barrier(4)
    outcomes: dict[int, BaseException | None] = {}

    def commit(i: int) -> None:
        try:
            barrier.wait()
            publish(
                index_url,
                PARAMS,
                {f"run-{i}": {"generation": f"g{i}", "documents": i, "committed": "t"}},
                {f"g{i}": {"documents": i, "bytes": 10}},
                looked_up=[],
            )
            outcomes[i] = None
        except BaseException as exc:  # noqa: BLE001 - checked below
            outcomes[i] = exc

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    landed = [i for i, exc in outcomes.items() if exc is None]
    assert len(landed) == 1, outcomes
    refused = [exc for exc in outcomes.values() if exc is not None]
    assert all(isinstance(exc, IndexMovedError) and f"run-{landed[0]}" in str(exc) for exc in refused), refused
    head, _ = read_head(index_url)
    assert sorted(head.runs) == [f"run-{landed[0]}"] and sorted(head.generations) == [f"g{landed[0]}"]
    # a run that did look the landed run up commits
    late = {"late": {"generation": "gl", "documents": 1, "committed": "t"}}
    publish(index_url, PARAMS, late, {"gl": {"documents": 1, "bytes": 1}}, looked_up=[f"run-{landed[0]}"])
    assert sorted(read_head(index_url)[0].runs) == sorted([f"run-{landed[0]}", "late"])


@pytest.mark.spark
def test_two_dated_runs_sharing_documents_committing_together(spark, tmp_path, monkeypatch, capsys):
    """Run A and run B share 100 documents and both finish their dedup against an empty index; B commits first.
    A's commit is refused (one line naming the index and B, exit code 1), the index keeps B alone; rerunning A
    recomputes its dedup, removes the 100 as duplicates of B, and commits."""
    import pipeline.dedup.stage as dedup_stage

    rng = random.Random(41)
    shared = [random_doc(rng) for _ in range(100)]
    only_a, only_b = [random_doc(rng) for _ in range(15)], [random_doc(rng) for _ in range(15)]
    write_jsonl(tmp_path / "in" / "a.jsonl", shared[:50] + only_a + shared[50:])
    write_jsonl(tmp_path / "in" / "b.jsonl", only_b + shared)
    index, run_a, run_b = tmp_path / "index", tmp_path / "run-a", tmp_path / "run-b"
    real_commit = dedup_stage.commit_run
    heads: list[bytes] = []

    def b_commits_first(ctx, looked_up):  # B ran its dedup while A was running; B's commit lands just before A's
        if ctx.run_dir.rstrip("/") == str(run_a) and not heads:
            heads.append(b"")
            run(spark, run_b, tmp_path / "in" / "b.jsonl", index)
            heads.append((index / "HEAD.json").read_bytes())
        return real_commit(ctx, looked_up)

    monkeypatch.setattr(dedup_stage, "commit_run", b_commits_first)
    with pytest.raises(IndexMovedError) as refused:
        run(spark, run_a, tmp_path / "in" / "a.jsonl", index)
    line, code = describe_error(refused.value)
    assert code == 1 and "\n" not in line and str(index) in line and str(run_b) in line and "rerun" in line
    assert (index / "HEAD.json").read_bytes() == heads[-1]  # A added nothing
    head, _ = read_head(str(index))
    assert list(head.runs) == [str(run_b)]
    assert sorted(p.name for p in (index / "generations").iterdir()) == sorted(head.generations)
    assert survivors(run_a) == set(shared + only_a)  # what A's refused run wrote: why it must not be published
    # issue 46: the report A's run wrote before the commit said nothing of the refusal; it now says why
    report = json.loads((run_a / "report.json").read_text())
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    assert report["after_run_errors"] == {"dedup": line}
    page = (run_a / "report.html").read_text()
    assert "nothing was committed" in line and "last step failed</b>" in page and html.escape(line) in page
    assert main(["report", str(run_a), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["after_run_errors"] == {"dedup": line}
    assert main(["report", str(run_a)]) == 0
    assert f"the dedup stage's last step failed after the run: {line}" in capsys.readouterr().out

    monkeypatch.setattr(dedup_stage, "commit_run", real_commit)
    said: list[str] = []
    ctx = RunContext(config(run_a, tmp_path / "in" / "a.jsonl", index), spark=spark)
    results = run_stages(ctx, log=said.append)
    assert "after_run_errors" not in json.loads((run_a / "report.json").read_text())  # committed now
    assert any("gained 1 run(s)" in line and str(run_b) in line for line in said)
    assert results["dedup"].counts["duplicates_of_earlier_runs"] == 100
    assert survivors(run_a) == set(only_a) and survivors(run_b) == set(only_b + shared)
    manifest = json.loads((run_a / "manifest.json").read_text())
    row = manifest["accounting"]["web"]
    assert row["documents_read"] == row["rejected"] + row["duplicates_removed"] + 100 + row["survivors"]
    assert row["written"] == 15 and manifest["dedup_index"]["run"] == str(run_a)
    assert sorted(read_head(str(index))[0].runs) == sorted([str(run_a), str(run_b)])


# ---- item 7: a dedup.index that cannot hold an index is refused before Spark starts


def _local_config(tmp_path, index) -> object:
    text = open("conf/local.yaml").read()
    return load_config_text(text, [f"output={tmp_path / 'run'}", f"dedup.index={index}"])


@pytest.mark.parametrize("where", ["file", "below_a_file"])
def test_an_index_path_that_is_a_file_is_a_config_error_at_preflight(tmp_path, monkeypatch, where):
    from tests.spark.cli.test_cli_errors import REPO

    monkeypatch.chdir(REPO)
    (tmp_path / "taken").write_text("not an index")
    index = tmp_path / "taken" if where == "file" else tmp_path / "taken" / "index"
    with pytest.raises(ConfigError) as err:
        preflight.check_paths(_local_config(tmp_path, index))
    assert err.value.key == "dedup.index" and str(tmp_path / "taken") in str(err.value)
    assert "\n" not in str(err.value)
    assert (tmp_path / "taken").read_text() == "not an index"


def test_an_index_path_that_is_a_file_ends_the_cli_before_spark(tmp_path, monkeypatch, capsys):
    from tests.spark.cli.test_cli_errors import REPO, _run_main

    monkeypatch.chdir(REPO)
    (tmp_path / "taken").write_text("x")
    argv = ["run", "--config", "conf/local.yaml", "--set", f"output={tmp_path / 'run'}"]
    code, line = _run_main([*argv, "--set", f"dedup.index={tmp_path / 'taken'}"], capsys)
    assert code == 2 and "'dedup.index'" in line and "existing file" in line
    assert not (tmp_path / "run" / "documents").exists()


# ---- item 8: a corrupt HEAD names the file and the key; describe fails on a missing generation


@pytest.mark.parametrize(
    "edit, key",
    [
        (lambda h: h.pop("parameters"), "parameters"),
        (lambda h: h.update(parameters=[1, 2]), "parameters"),
        (lambda h: h["runs"]["r1"].pop("generation"), "runs.r1.generation"),
        (lambda h: h["runs"]["r1"].update(documents="7"), "runs.r1.documents"),
        (lambda h: h.update(generations=[]), "generations"),
        (lambda h: h.update(serial="3"), "serial"),
    ],
)
def test_a_corrupt_head_is_one_line_naming_the_file_and_key(tmp_path, edit, key):
    index = tmp_path / "index"
    publish(str(index), PARAMS, {"r1": {"generation": "g1", "documents": 7, "committed": "t"}}, {"g1": _gen(7)})
    data = json.loads((index / "HEAD.json").read_text())
    edit(data)
    (index / "HEAD.json").write_text(json.dumps(data))
    with pytest.raises(DedupIndexError) as err:
        read_head(str(index))
    line, code = describe_error(err.value)
    assert code == 1 and "\n" not in line and str(index / "HEAD.json") in line and repr(key) in line


def _gen(documents: int) -> dict:
    return {"documents": documents, "bytes": 10}


def test_describe_exits_non_zero_when_head_maps_a_run_to_a_missing_generation(tmp_path, capsys):
    index = tmp_path / "index"
    (index / "generations" / "g1").mkdir(parents=True)
    publish(
        str(index),
        PARAMS,
        {
            "r1": {"generation": "g1", "documents": 3, "committed": "t"},
            "r2": {"generation": "g2", "documents": 4, "committed": "t"},
        },
        {"g1": _gen(3), "g2": _gen(4)},
    )
    assert main(["index", "describe", str(index)]) == 1
    out, err = capsys.readouterr()
    assert "2 run(s), 7 documents" in out and "problem:" in out and "g2" in out
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "g2" in lines[0] and str(index) in lines[0]


@pytest.mark.spark
def test_a_run_on_an_index_missing_a_generation_is_refused_before_ingest(spark, tmp_path):
    from pipeline.dedup.index.spark.lookup import index_parameters
    from pipeline.dedup.plan import DedupPlan

    index, out = tmp_path / "index", tmp_path / "run"
    params = index_parameters(DedupPlan.from_config(config(out, tmp_path / "in" / "a.jsonl", index)).lsh)
    publish(str(index), params, {"r1": {"generation": "g9", "documents": 3, "committed": "t"}}, {"g9": _gen(3)})
    write_jsonl(tmp_path / "in" / "a.jsonl", [random_doc(random.Random(2)) for _ in range(5)])
    with pytest.raises(DedupIndexError, match="g9"):
        run(spark, out, tmp_path / "in" / "a.jsonl", index)
    assert not (out / "documents").exists()


# ---- item 11: compaction while a run commits


def _write_generation(index, gid: str, rows: dict[str, list[int]]) -> None:
    """A generation holding ``rows`` (run -> doc ids), one band row per document."""
    bands = [{"band": 0, "key": d, "run": r, "doc_id": d} for r, ids in rows.items() for d in ids]
    docs = [
        {"run": r, "doc_id": d, "source": "web", "kept": True, "h1": d, "h2": d, "text": f"t{d}"}
        for r, ids in rows.items()
        for d in ids
    ]
    schema_b = pa.schema([("band", pa.int32()), ("key", pa.int64()), ("run", pa.string()), ("doc_id", pa.int64())])
    schema_d = pa.schema(
        [
            ("run", pa.string()),
            ("doc_id", pa.int64()),
            ("source", pa.string()),
            ("kept", pa.bool_()),
            ("h1", pa.int64()),
            ("h2", pa.int64()),
            ("text", pa.string()),
        ]
    )
    for table, data, schema in (("bands", bands, schema_b), ("docs", docs, schema_d)):
        (index / "generations" / gid / table).mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(data, schema), index / "generations" / gid / table / "part-0.parquet")


def _two_run_index(tmp_path):
    index = tmp_path / "index"
    _write_generation(index, "20200101T000000Z-a", {"r1": [1, 2, 3]})
    _write_generation(index, "20200101T000000Z-b", {"r2": [4, 5]})
    for run_name, gid, n in (("r1", "20200101T000000Z-a", 3), ("r2", "20200101T000000Z-b", 2)):
        publish(str(index), PARAMS, {run_name: {"generation": gid, "documents": n, "committed": "t"}}, {gid: _gen(n)})
    return index


def _recommit_r1(index, serial: list[int]) -> None:
    """What a recommit of run r1 does: write a new generation, publish it, delete the one it replaces."""
    serial[0] += 1
    gid = f"20200101T00000{serial[0]}Z-r1"
    _write_generation(index, gid, {"r1": [1, 2, 3, 10 + serial[0]]})
    replaced = publish(
        str(index), PARAMS, {"r1": {"generation": gid, "documents": 4, "committed": "t2"}}, {gid: _gen(4)}
    )
    for old in replaced:
        shutil.rmtree(index / "generations" / old)


@pytest.mark.spark
def test_compaction_during_a_commit_starts_again_and_loses_nothing(spark, tmp_path, monkeypatch):
    """A recommit of r1 lands while compaction reads r1's old generation (and deletes it): compaction notices
    HEAD moved, starts again from the new HEAD, and the compacted index holds r1's new rows and r2's."""
    import pipeline.dedup.index.spark.commit as commit

    index, serial = _two_run_index(tmp_path), [0]
    real_write = commit.write_table_at

    def commit_lands_under_the_read(*args, **kwargs):
        if serial[0] == 0:
            _recommit_r1(index, serial)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(commit, "write_table_at", commit_lands_under_the_read)
    summary = commit.compact(spark, str(index))
    assert "into" in summary
    head, _ = read_head(str(index))
    assert len(head.generations) == 1 and {r: e["documents"] for r, e in head.runs.items()} == {"r1": 4, "r2": 2}
    gid = next(iter(head.generations))
    rows = pq.read_table(index / "generations" / gid / "docs").to_pylist()
    assert sorted((r["run"], r["doc_id"]) for r in rows) == [
        ("r1", 1),
        ("r1", 2),
        ("r1", 3),
        ("r1", 11),
        ("r2", 4),
        ("r2", 5),
    ]
    assert sorted(p.name for p in (index / "generations").iterdir()) == [gid]


@pytest.mark.spark
def test_compaction_under_commits_that_never_stop_is_one_line_naming_the_index(spark, tmp_path, monkeypatch):
    import pipeline.dedup.index.spark.commit as commit

    index, serial = _two_run_index(tmp_path), [0]
    real_write = commit.write_table_at

    def a_commit_every_time(*args, **kwargs):
        if "bands" in str(args[2]):
            _recommit_r1(index, serial)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(commit, "write_table_at", a_commit_every_time)
    with pytest.raises(DedupIndexError) as err:
        commit.compact(spark, str(index))
    line, code = describe_error(err.value)
    assert code == 1 and "\n" not in line and str(index) in line and "compact" in line
    head, _ = read_head(str(index))
    assert head.runs["r1"]["documents"] == 4 and head.runs["r2"]["documents"] == 2
    assert len(head.generations) == 2  # nothing was compacted; the last recommit's generation and r2's


@pytest.mark.spark
def test_compaction_during_a_lookup_starts_the_lookup_again(spark, tmp_path, monkeypatch):
    """Issue 46: ``index compact`` publishing while a run's dedup reads the index deletes the generation the lookup
    is reading, which ended the run in a raw Spark error (a file listed, then gone). The lookup sees HEAD moved and
    starts again from the compacted generation: the run removes what it shares with the indexed run."""
    import pipeline.dedup.index.spark.commit as commit
    import pipeline.dedup.index.spark.lookup as lookup

    rng = random.Random(46)
    shared, only_a = [random_doc(rng) for _ in range(30)], [random_doc(rng) for _ in range(10)]
    write_jsonl(tmp_path / "in" / "b.jsonl", shared)
    write_jsonl(tmp_path / "in" / "a.jsonl", only_a + shared)
    index, run_a, run_b = tmp_path / "index", tmp_path / "run-a", tmp_path / "run-b"
    run(spark, run_b, tmp_path / "in" / "b.jsonl", index)
    before = set(read_head(str(index))[0].generations)
    real_tables, compacted = lookup.live_tables, []

    def compaction_lands_under_the_read(*args, **kwargs):
        frames = real_tables(*args, **kwargs)  # the generations' files are listed here
        if not compacted:
            compacted.append(commit.compact(spark, str(index)))  # publishes a new generation, deletes the old
        return frames

    monkeypatch.setattr(lookup, "live_tables", compaction_lands_under_the_read)
    _, results = run(spark, run_a, tmp_path / "in" / "a.jsonl", index)
    head, _ = read_head(str(index))
    assert compacted and not set(head.generations) & before  # the generation the first read listed is gone
    assert sorted(head.runs) == sorted([str(run_a), str(run_b)])  # and run a committed after it
    assert results["dedup"].counts["duplicates_of_earlier_runs"] == 30
    assert results["dedup"].counts["index_runs"] == [str(run_b)]
    assert survivors(run_a) == set(only_a)


def test_a_lookup_under_compactions_that_never_stop_is_one_line_naming_the_index(monkeypatch):
    """Every attempt's read fails and HEAD has moved each time: after three the run stops with one line."""
    import types

    import pipeline.dedup.index.spark.lookup as lookup
    from pipeline.dedup.index.head import Head

    versions = iter(range(100))
    head = Head(parameters={}, runs={"r1": {"generation": "g1", "documents": 1, "committed": "t", "sequence": 1}})
    monkeypatch.setattr(lookup, "read_head", lambda index: (head, next(versions)))
    monkeypatch.setattr(lookup, "check_parameters", lambda *a: None)
    monkeypatch.setattr(lookup, "index_parameters", lambda p: {})
    attempts: list[int] = []

    def files_gone(*args):
        attempts.append(1)
        raise RuntimeError("SparkFileNotFoundException: File file:/index/generations/g1/bands/part-0 does not exist")

    monkeypatch.setattr(lookup, "_matches", files_gone)
    ctx = types.SimpleNamespace(run_dir="/runs/r2", write_table=lambda frame, name: None)
    plan = types.SimpleNamespace(index="/index", lsh=None)
    with pytest.raises(DedupIndexError) as err:
        lookup.match_index(ctx, None, None, plan)
    line, code = describe_error(err.value)
    assert len(attempts) == 3 and code == 1 and "\n" not in line and "/index" in line and "looked it up" in line
