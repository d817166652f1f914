"""bench/readme_table.py, the runner of the bench table (docs/benchmarks.md): each entry's figures shown from real
bench JSON results (saved quick runs, and small benches run here) and checked against the bench's own printed
lines, the dirty-tree refusal, a needed file that is absent, the cold caches, and the table printed again from
its JSON."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
SAVED = Path(__file__).resolve().parents[1] / "readme_table_results"
SCHEMA = json.loads((REPO / "bench" / "result.schema.json").read_text())


@pytest.fixture
def table():
    """bench/readme_table.py as a module."""
    from bench import readme_table

    return readme_table


def _entry(table, name: str):
    return table.by_name()[name]


def _figures(table, name: str, values: dict[str, float]) -> dict[str, str]:
    """Each figure of entry ``name`` shown from ``values``, by label."""
    return {f.label: table.extract((f,), values).removeprefix(f.label + " ") for f in _entry(table, name).figures}


def _line(text: str, prefix: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(prefix))


def _run_bench(tmp_path: Path, name: str, *args: str) -> tuple[str, dict[str, float]]:
    """Run a bench through the runner: its stdout and its JSON result's values."""
    result = tmp_path / f"{name}.json"
    out = subprocess.run(
        [sys.executable, "-m", "bench", "--result", str(result), name, *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(result.read_text())
    jsonschema.validate(data, SCHEMA)
    return out.stdout, {k: v["value"] for k, v in data["figures"].items()}


def test_every_saved_result_yields_every_figure(table) -> None:
    """Each entry's figures are shown from a real (quick) JSON result of its bench, and each result validates
    against bench/result.schema.json."""
    saved = sorted(SAVED.glob("*.json"))
    assert len(saved) >= 7
    names = table.by_name()
    seen = set()
    for path in saved:
        data = json.loads(path.read_text())
        jsonschema.validate(data, SCHEMA)
        name = path.name.split(".")[0]
        seen.add(name)
        values = {k: v["value"] for k, v in data["figures"].items()}
        for figure in names[name].figures:
            got = table.extract((figure,), values)
            assert "not found" not in got, f"{path.name}: {got}"
    assert len(seen) >= 7


def test_saved_figures_match_the_lines_read_independently(table) -> None:
    """The figures shown from the JSON results equal what splitting the bench's own printed lines gives."""
    bigcode = (SAVED / "vs_bigcode_synthetic.stdout").read_text()
    figures = _figures(table, "vs_bigcode_synthetic", table.values_of(SAVED / "vs_bigcode_synthetic.json"))
    peer, ours = _line(bigcode, "BigCode script").split(), _line(bigcode, "ingest + dedup (here)").split()
    assert figures["survivors"] == f"{ours[5]} vs {peer[3]}"
    assert figures["speed-up"] == _line(bigcode, "speed-up:").split()[1]
    precision = [line.split() for line in bigcode.splitlines() if line.startswith(("BigCode script", "ingest +"))]
    assert figures["precision ours"] == f"{precision[-1][6]} (matched pair)"
    assert figures["precision script"] == f"{precision[-2][-1]} (best match)"


def test_scale_row_is_the_json_cpu_seconds_per_gb(tmp_path: Path, table) -> None:
    """The bench_scale row cites docs/scaling-uniform-101f9dd.json: CPU s per GB recomputed here from its sizes."""
    data = json.loads((REPO / "docs" / "scaling-uniform-101f9dd.json").read_text())
    expected = ", ".join(
        f"{s['size_gb']:.2f} GB {(s['driver_cpu_s'] + s['executors_cpu_s']) / (s['input_bytes'] / 1e9):.0f}"
        for s in data["sizes"]
    )
    _, values = _run_bench(tmp_path, "scale", "--from-json", "docs/scaling-uniform-101f9dd.json")
    assert _figures(table, "scale", values)["CPU s/GB"] == expected
    commits = " / ".join(c[:7] for c in ([data["commit"]] if isinstance(data["commit"], str) else data["commit"]))
    assert table.json_commit(REPO / "docs" / "scaling-uniform-101f9dd.json") == commits


def test_missing_result_or_value_is_said(table) -> None:
    """No JSON result: the cell says so; a result without a figure's value: that figure says "not found"."""
    figures = _entry(table, "filter_stage").figures
    assert table.extract(figures, None) == "no JSON result"
    got = table.extract(figures, {"filter/(ingest+dedup)": 0.5})
    assert got == "filter/(ingest+dedup) 0.50x; whole run: not found"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def test_dirty_tree_is_refused(table, tmp_path: Path) -> None:
    """A clean tree gives HEAD's short commit; a changed file is refused by name unless dirt is allowed."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = _git(tmp_path, "rev-parse", "HEAD")
    got = table.commit_of(tmp_path, allow_dirty=False)
    assert head.startswith(got) and len(got) >= 7
    (tmp_path / "a.py").write_text("x = 2\n")
    with pytest.raises(table.TableError, match=r"uncommitted change.*a\.py.*--allow-dirty"):
        table.commit_of(tmp_path, allow_dirty=False)
    assert table.commit_of(tmp_path, allow_dirty=True) == got + "-dirty"


def test_unknown_entry_is_a_one_line_error() -> None:
    """--only with a name the table does not know: exit 2, one line naming it."""
    out = subprocess.run(
        [sys.executable, "-m", "bench", "readme_table", "--only", "nosuch"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "'nosuch'" in out.stderr and "--only" in out.stderr


def test_absent_data_is_said_in_the_row(table, tmp_path: Path) -> None:
    """An entry whose data is absent is not run, and its row names the missing file."""
    from dataclasses import replace

    missing = tmp_path / "no-corpus"
    entry = replace(_entry(table, "filter_stage"), needs=(missing,))
    row = table.run_entry(entry, quick=True, out=tmp_path, commit="abc1234")
    assert row["runs"] == {}
    text = table.render({"commit": "abc1234", "rows": [row]})
    assert f"not run: {missing} absent" in text.splitlines()[-1]


def test_cold_caches_leave_out_ours_only(table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cold run's cache: the user's other cache entries linked, no numba cache, no class-data archive."""
    user = tmp_path / "user-cache"
    for name in ("numba", "spark-pretrain-pipeline", "pip", "datatrove"):
        (user / name).mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(user))
    env = table.cold_caches(tmp_path / "cold")
    xdg = Path(env["XDG_CACHE_HOME"])
    assert sorted(p.name for p in xdg.iterdir()) == ["datatrove", "pip"]
    assert (xdg / "pip").resolve() == (user / "pip").resolve()
    assert list(Path(env["NUMBA_CACHE_DIR"]).iterdir()) == []


def _cells(markdown: str) -> list[list[str]]:
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and not line.startswith("| bench |")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def test_from_json_round_trip(table, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A table.json printed again gives the rows it holds; --reparse reads the saved outputs beside it."""
    run = {"exit": 0, "wall_s": 12.5, "cpu_s": 20.1, "load": [0.5, 1.25], "stdout": "ingest.steady.stdout"}
    rows = [
        {"name": "ingest", "command": "python -m bench ingest --mb 200", "what": "ingest | parse",
         "commit": "abc1234", "status": "ok", "runs": {"cold": {**run, "stdout": "ingest.cold.stdout"}, "steady": run},
         "cold": "stage 1.0 MB/s (9.0 s)", "steady": "stage 2.0 MB/s (4.5 s)"},
        {"name": "bpe", "command": "python -m bench bpe", "what": "BPE", "commit": "abc1234",
         "status": "not run: /x absent", "runs": {}, "cold": None, "steady": None},
    ]  # fmt: skip
    path = tmp_path / "table.json"
    path.write_text(json.dumps({"commit": "abc1234", "quick": False, "cpus": 2, "rows": rows}))
    assert table.main(["--from-json", str(path)]) == 0
    cells = _cells(capsys.readouterr().out)
    assert cells[0] == [
        "ingest", "`python -m bench ingest --mb 200`", "ingest \\| parse", "stage 1.0 MB/s (9.0 s)",
        "stage 2.0 MB/s (4.5 s)", "abc1234", "cold 0.5-1.25, steady 0.5-1.25", "cold 12.5 / 20.1, steady 12.5 / 20.1",
    ]  # fmt: skip
    assert cells[1][0] == "bpe" and cells[1][4] == "not run: /x absent"

    for kind in ("cold", "steady"):
        (tmp_path / f"bigcode.{kind}.json").write_text((SAVED / "vs_bigcode_synthetic.json").read_text())
    rows[0]["runs"]["cold"]["result"], rows[0]["runs"]["steady"]["result"] = "bigcode.cold.json", "bigcode.steady.json"
    rows[0]["name"] = "vs_bigcode_synthetic"
    path.write_text(json.dumps({"commit": "abc1234", "quick": False, "cpus": 2, "rows": rows}))
    assert table.main(["--from-json", str(path), "--reparse"]) == 0
    cells = _cells(capsys.readouterr().out)
    line = _line((SAVED / "vs_bigcode_synthetic.stdout").read_text(), "speed-up:").split()
    assert cells[0][3].startswith(f"speed-up {line[1]}") and cells[0][4].startswith(f"speed-up {line[1]}")


def test_from_json_of_something_else_names_the_key(tmp_path: Path) -> None:
    """--from-json on a JSON file that is not a table: exit 2, naming the missing key."""
    path = tmp_path / "other.json"
    path.write_text('{"sizes": []}')
    out = subprocess.run(
        [sys.executable, "-m", "bench", "readme_table", "--from-json", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 2 and "'rows'" in out.stderr and out.stderr.count("\n") == 1


def test_every_table_row_has_an_entry(table) -> None:
    """Each script of the bench table (docs/benchmarks.md's, and the earlier rows kept in docs/benchmarks-history.md
    but its retired benches) has an entry, each row of the table is its entry's command, and the default set runs
    bench_scale from its JSON only."""
    page = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = page[page.index("## The table") : page.index("## Real benchmark corpora")]
    history = (REPO / "docs" / "benchmarks-history.md").read_text(encoding="utf-8").split("## Retired benches")[0]
    in_tables = {f"{n}.py" for n in re.findall(r"^\| `bench/(bench_\w+)\.py", history, re.MULTILINE)}
    in_table = {f"bench_{n}.py" for n in re.findall(r"^\| \w+ \| `python -m bench (\w+)", section, re.MULTILINE)}
    assert len(in_table) >= 6  # bench_megatron.py holds two rows (blend, training_indices)
    in_tables |= in_table
    entries = table.select(None, everything=False)
    assert in_tables <= {e.script for e in entries}
    rows = re.findall(r"^\| (\w+) \| `(python -m bench [^`]+)` \|", section, re.MULTILINE)
    names = table.by_name()
    assert [(name, table.command_text(names[name], quick=False)) for name, _ in rows] == rows
    scale = [e for e in entries if e.script == "bench_scale.py"]
    assert [e.command for e in scale] == ["scale --from-json docs/scaling-uniform-101f9dd.json"]


def test_figure_formats_ratios_choices_and_each(table) -> None:
    """In a figure's format (bench/readme_table.json), ``{a/b}`` is a over b unless a value has that very name,
    ``{x:yes|no}`` shows yes for a true x, and ``each`` gives one cell per matching value, its group's values by
    their short names; a value the format needs and the result lacks raises KeyError (shown as "not found")."""
    figure = table.Figure
    assert figure("r", "{a/b:.2f}").text({"a": 3.0, "b": 2.0}) == "1.50"
    assert figure("r", "{a/b:.2f}").text({"a": 3.0, "b": 2.0, "a/b": 7.0}) == "7.00"
    assert [figure("m", "{x:on|off}").text({"x": x}) for x in (1.0, 0.0)] == ["on", "off"]
    each = figure("e", "{1} {value:.1f} vs {theirs:.1f} ({value/theirs:.1f}x)", each=r"(\w+) ours")
    values = {"pii ours": 4.0, "pii theirs": 2.0, "c4 ours": 1.0, "c4 theirs": 5.0}
    assert each.text(values) == "pii 4.0 vs 2.0 (2.0x), c4 1.0 vs 5.0 (0.2x)"
    with pytest.raises(KeyError):
        figure("r", "{a/b}").text({"a": 1.0})
    assert table.extract((figure("r", "{a/b}"),), {"a": 1.0}) == "r: not found"
