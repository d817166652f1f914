"""The pure parts of bench/bench_scale.py: the corpus prefix split by source, the config it submits (checked by
the pipeline's own config loader), and the process-tree memory sampler (bench/bench_scale.py, TreeMemory)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

from pipeline.config import load_config_text

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch):
    """bench/bench_scale.py as a module."""
    from bench import bench_scale

    return bench_scale


def _shards(tmp_path: Path) -> tuple[Path, list[bytes]]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    lines = []
    for i in range(40):
        source = ["python", "debian", "odd name/ü"][i % 3]
        record = {"source": source, "path": f"f{i}", "text": "word " * (i + 1)}
        lines.append((json.dumps(record, ensure_ascii=False) + "\n").encode())
    (corpus / "part-00000.jsonl").write_bytes(b"".join(lines[:25]))
    (corpus / "part-00001.jsonl").write_bytes(b"".join(lines[25:]))
    (corpus / "notes.txt").write_text("not a shard\n")
    return corpus, lines


def test_prefix_takes_whole_lines_in_order_split_by_source(bench, tmp_path: Path) -> None:
    corpus, lines = _shards(tmp_path)
    target = sum(len(x) for x in lines[:31]) - 5  # ends inside line 31 (the second shard's 6th)
    taken, per_source = bench.prefix(corpus, target, tmp_path / "out")

    want = lines[:31]  # whole lines until the target is reached
    assert taken == sum(len(x) for x in want) >= target
    expected: dict[str, list[bytes]] = {}
    for line in want:
        expected.setdefault(json.loads(line)["source"], []).append(line)
    found = {}
    for directory in sorted((tmp_path / "out").iterdir()):
        found[directory.name] = [x for f in sorted(directory.iterdir()) for x in f.read_bytes().splitlines(True)]
    by_name = {"python": "python", "debian": "debian", "odd name/ü": "odd_name__"}
    assert found == {by_name[k]: v for k, v in expected.items()}
    assert per_source == {by_name[k]: sum(len(x) for x in v) for k, v in expected.items()}


def test_prefix_of_a_corpus_too_small_names_the_option(bench, tmp_path: Path) -> None:
    corpus, lines = _shards(tmp_path)
    with pytest.raises(SystemExit, match="--corpus: .* less than"):
        bench.prefix(corpus, 2 * sum(len(x) for x in lines), tmp_path / "out")


def test_the_submitted_config_is_a_valid_pipeline_config(bench, tmp_path: Path) -> None:
    per_source = {"debian": 3 * 10**8, "python": 7 * 10**8}
    raw = bench.config(tmp_path / "data", per_source, tmp_path / "run", tmp_path / "index", {"python"})
    loaded = load_config_text(yaml.safe_dump(raw))
    dataproc = yaml.safe_load((REPO / "conf" / "dataproc.yaml").read_text())
    assert [s.name for s in loaded.sources] == ["debian", "python"]
    assert loaded.source("python").filter == [] and loaded.source("debian").filter is None
    assert raw["filter"] == dataproc["filter"] and len(raw["filter"]) >= 6
    assert loaded.dedup.index == str(tmp_path / "index")
    assert loaded.training is not None and loaded.training.samples[0] == 10**9 // 4 // 2048


def test_tree_memory_sees_a_child_python_holding_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.bench_scale import TreeMemory

    ready = tmp_path / "ready"
    holder = "import time; b = bytes(range(256)) * (300 * 2**12)\nwhile time.process_time() < 0.5: pass\n"
    holder += f"open({str(ready)!r}, 'w').close(); time.sleep(30)"
    shell = subprocess.Popen(["sh", "-c", f'{sys.executable} -c "{holder}"; true'])
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists()
        memory = TreeMemory(shell.pid)
        memory.sample()
    finally:
        for child in psutil.Process(shell.pid).children():
            child.kill()
        shell.wait()
    report = memory.report()
    assert report["driver_mib"]["python"] >= 300  # the child's 300 MiB of bytes, every page written
    assert report["driver_mib"]["jvm"] == 0
    assert report["driver_cpu_s"] >= 0.5  # the child spun until its own clock said 0.5 CPU s


def test_cpu_seconds_per_added_gb_separate_the_fixed_part(bench) -> None:
    """A run costing a fixed 100 CPU s plus 50 per GB: the added GBs cost 50 each, whatever the order of sizes."""

    def row(gb: float) -> dict:
        return {"input_bytes": int(gb * 10**9), "driver_cpu_s": 100.0, "executors_cpu_s": 50.0 * gb}

    rows = [row(1), row(2), row(10), row(5)]
    assert bench.marginal_cpu_per_gb(rows) == pytest.approx([None, 50.0, 50.0, 50.0])
    del rows[1]["executors_cpu_s"]  # figures from before CPU was measured: no difference to take
    assert bench.marginal_cpu_per_gb(rows)[:2] == [None, None]


def test_driver_peak_per_stage_from_the_samples_inside_each_stage(bench) -> None:
    """The driver's peak per stage is the largest sample between its start and end; a stage with no sample inside
    takes the last one before it; a stage not finished is left out."""
    import calendar

    noon = calendar.timegm((2026, 1, 1, 12, 0, 0, 0, 0, 0))
    mib = 2**20
    samples = [(-2, 900), (1, 100), (5, 300), (9, 200), (11, 700), (14, 50), (30, 400)]
    driver = [(noon + t, rss * mib) for t, rss in samples]
    stages = [
        {"stage": "ingest", "seconds": 10.0, "finished": "2026-01-01T12:00:10Z"},  # 12:00:00-10: 100, 300, 200
        {"stage": "dedup", "seconds": 0.2, "finished": "2026-01-01T12:00:12Z"},  # 11.8-12: none inside, 700 before
        {"stage": "spans", "seconds": 3.0, "finished": "2026-01-01T12:00:16Z"},  # 13-16: 50 only (700 was before it)
        {"stage": "tokenize", "seconds": 1.0, "finished": None},
    ]
    peaks = bench.driver_peak_per_stage(driver, stages)
    assert peaks == {"ingest": 300.0, "dedup": 700.0, "spans": 50.0}


def test_cpu_per_stage_from_the_sampled_series_and_the_timeline(bench) -> None:
    """Two stages of report.json's timeline (ending 12:00:10 and 12:00:30 UTC) over a sampled CPU series: each gets
    the CPU used between its start and its end, and the added GB per stage is the difference per GB."""
    import calendar

    noon = calendar.timegm((2026, 1, 1, 12, 0, 0, 0, 0, 0))
    series = [(noon + t, cpu) for t, cpu in [(-1, 1.0), (0, 2.0), (9.5, 12.0), (10, 13.0), (25, 40.0), (30, 50.0)]]
    stages = [
        {"stage": "ingest", "seconds": 10.0, "finished": "2026-01-01T12:00:10Z"},
        {"stage": "dedup", "seconds": 5.0, "finished": "2026-01-01T12:00:30Z"},
        {"stage": "tokenize", "seconds": 1.0, "finished": None},  # not finished: left out
    ]
    assert bench.cpu_per_stage(series, stages) == {"ingest": 11.0, "dedup": 10.0}

    def row(gb: float, ingest: float, dedup: float) -> dict:
        return {"input_bytes": int(gb * 10**9), "stage_cpu_s": {"ingest": ingest, "dedup": dedup}}

    rows = [row(1, 30, 100), row(0.5, 20, 60), {"input_bytes": 10**8}]  # the last from before stages were measured
    assert bench.marginal_stage_cpu(rows) == [{"ingest": 20.0, "dedup": 80.0}]
    for full in rows[:2]:  # what markdown() needs of a measured row besides the stages' CPU
        gb = full["input_bytes"] / 10**9
        full |= {"size_gb": gb, "seconds_per_gb": {"ingest": 1.0, "dedup": 1.0, "stages": 2.0, "submit": 3.0}}
        full |= {"driver_cpu_s": 1.0, "executors_cpu_s": 1.0, "driver_mib": {"total": 1.0}}
        full |= {"executors_mib": [{"total": 1.0}], "load_mean": 1.0}
    table = bench.markdown({"sizes": rows[:2]})
    assert table.endswith("| 0.50 -> 1.00 | 20 | 80 |")


def test_spans_turns_on_the_exact_substring_part_only_when_asked(bench, tmp_path: Path) -> None:
    per_source = {"debian": 10**8}
    off = load_config_text(
        yaml.safe_dump(bench.config(tmp_path / "d", per_source, tmp_path / "r", tmp_path / "i", set()))
    )
    raw = bench.config(tmp_path / "d", per_source, tmp_path / "r", tmp_path / "i", set(), spans=True)
    on = load_config_text(yaml.safe_dump(raw))
    assert off.spans is None
    assert on.spans is not None and on.spans.exact_substring is not None
    assert (on.spans.exact_substring.min_tokens, on.spans.exact_substring.tokenizer) == (50, "bytes")
    assert on.spans.sentences is None and on.spans.lines is None
