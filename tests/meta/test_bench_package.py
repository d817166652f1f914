"""The bench package's runner (``python -m bench``): every bench listed and its ``--help`` working, the JSON result
checked against bench/result.schema.json by jsonschema, ``--baseline-rev`` loading a module from git, and the
harness's process sampler counting reaped workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]


def _bench(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def runnable(package: str) -> list[str]:
    """The modules of ``package`` with a __main__ block."""
    return [
        p.stem
        for p in (REPO / package).glob("*.py")
        if not p.stem.startswith("_") and 'if __name__ == "__main__":' in p.read_text()
    ]


def test_list_names_every_runnable_module() -> None:
    """--list names each module of bench/ and corpora/ that has a __main__ block (bench_<name>.py as <name>,
    corpora/<name>.py as <name>_corpus), and nothing else."""
    out = _bench("--list")
    assert out.returncode == 0, out.stderr
    listed = [line.split()[0] for line in out.stdout.splitlines()]
    names = [stem.removeprefix("bench_") for stem in runnable("bench")] + [f"{s}_corpus" for s in runnable("corpora")]
    assert sorted(listed) == sorted(names)
    assert {"vs_bigcode", "scale", "readme_table", "release_corpus", "mixed_corpus", "constant_corpus"} <= set(listed)


def test_every_bench_answers_help() -> None:
    """Each listed bench prints its usage and exits 0 on --help (its imports and arguments parse)."""
    names = [line.split()[0] for line in _bench("--list").stdout.splitlines()]
    failed = {}
    for name in names:
        out = _bench(name, "--help")
        if out.returncode != 0 or "usage:" not in out.stdout:
            failed[name] = (out.stderr or out.stdout)[-300:]
    assert failed == {}


def test_unknown_bench_is_a_one_line_error() -> None:
    """A name the runner does not know: exit 2 and the name in the message."""
    out = _bench("nosuch")
    assert out.returncode == 2 and "'nosuch'" in out.stderr and "--list" in out.stderr


def test_scale_result_validates_against_the_schema(tmp_path: Path) -> None:
    """The scale bench reprinting docs/scaling-uniform-101f9dd.json writes its JSON result where --result says; it
    validates against the schema and its figures are the CPU seconds per GB recomputed here from that file."""
    path = tmp_path / "scale.json"
    out = _bench("--result", str(path), "scale", "--from-json", "docs/scaling-uniform-101f9dd.json")
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(path.read_text())
    schema = json.loads((REPO / "bench" / "result.schema.json").read_text())
    jsonschema.validate(result, schema)
    assert result["name"] == "scale" and result["args"]["from_json"] == "docs/scaling-uniform-101f9dd.json"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    assert result["commit"].removesuffix("-dirty") == head
    sizes = json.loads((REPO / "docs" / "scaling-uniform-101f9dd.json").read_text())["sizes"]
    expected = {
        f"{s['size_gb']:.2f} GB": (s["driver_cpu_s"] + s["executors_cpu_s"]) / (s["input_bytes"] / 1e9) for s in sizes
    }
    assert {k: v["value"] for k, v in result["figures"].items()} == pytest.approx(expected)
    assert {v["unit"] for v in result["figures"].values()} == {"CPU s/GB"}


def test_schema_rejects_a_figure_without_unit() -> None:
    """The schema is not vacuous: a figure given as a bare number fails it."""
    schema = json.loads((REPO / "bench" / "result.schema.json").read_text())
    bad = {"schema": 1, "name": "x", "commit": "0" * 40, "args": {}, "figures": {"a": 1.0}}
    bad["machine"] = {"cpus": 2, "memory_gb": 1.0, "platform": "p", "python": "3", "load": 0.1}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_module_at_loads_the_source_of_that_revision() -> None:
    """--baseline-rev's loader: the module's text is git's at that revision (read back from git here), and it
    imports; an unknown revision is a BaselineError naming it."""
    from bench.harness import BaselineError, module_at

    module = module_at("HEAD", "pipeline/dedup/token_counts.py")
    shown = subprocess.run(
        ["git", "show", "HEAD:pipeline/dedup/token_counts.py"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert Path(module.__file__ or "").read_text() == shown
    assert module.__package__ == "pipeline.dedup" and callable(module.token_counts)
    assert module.token_counts(["a b c"]).tolist() == [3]
    with pytest.raises(BaselineError, match="no-such-rev"):
        module_at("no-such-rev", "pipeline/dedup/token_counts.py")


def test_training_indices_with_an_empty_split_is_a_one_line_error(tmp_path: Path) -> None:
    """At 1e6 tokens the test split of each source holds no document: the bench says so in one line naming
    --tokens and exits (megatron-core's builder would loop forever on it), its scratch directory removed."""
    out = _bench(
        "megatron", "training_indices", "--tokens", "1e6", "--repeat", "1", env={"TMPDIR": str(tmp_path)}, timeout=60
    )
    assert out.returncode == 1 and out.stderr.strip().startswith("--tokens: at 1e+06 tokens the test split")
    assert len(out.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_no_bench_leaves_a_scratch_directory_behind() -> None:
    """Scratch space comes from TemporaryDirectory (removed when the bench ends) or an explicit --work: no
    tempfile.mkdtemp / mkstemp / NamedTemporaryFile(delete=False), whose leftovers filled /tmp before; corpora/ too."""
    leaks = {
        f"{path.name}:{number}": line.strip()
        for path in sorted([*(REPO / "bench").glob("*.py"), *(REPO / "corpora").glob("*.py")])
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if any(call in line for call in ("mkdtemp(", "mkstemp(", "delete=False"))
    }
    assert leaks == {}


BURNER = """
import os, sys, time
def burn(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
burn(0.2)
pid = os.fork()
if pid == 0:
    burn(0.4)
    os._exit(0)
os.waitpid(pid, 0)
open(sys.argv[1], "w").close()
time.sleep(60)
"""


def test_process_tree_counts_a_reaped_worker_only_when_asked(tmp_path: Path) -> None:
    """``ProcessTree(reaped=True)``: a Python process below the root also counts the children it waited for (as the
    pyspark daemon its exited workers); without it, a worker that exited before the sample is lost."""
    from bench.harness import ProcessTree

    done = tmp_path / "reaped"
    shell = subprocess.Popen(["sh", "-c", f'{sys.executable} -c "$0" {done}; true', BURNER])
    try:
        deadline = time.monotonic() + 120
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert done.exists(), "the burner never reaped its child"
        trees = {reaped: ProcessTree(shell.pid, reaped=reaped) for reaped in (False, True)}
        for tree in trees.values():
            tree.sample()
        cpu = {reaped: tree.cpu(jvm=False) - tree.seen[shell.pid][1] for reaped, tree in trees.items()}
        # the burner's own 0.2 s (user and system ticks, each cut to 0.01 s) and its start, not the child's 0.4 s
        assert 0.18 <= cpu[False] < 0.55, cpu
        assert cpu[True] - cpu[False] >= 0.39, cpu  # the reaped child's 0.4 s (clock ticks: 0.01 s)
    finally:
        for child in psutil.Process(shell.pid).children(recursive=True):
            child.kill()
        shell.kill()
        shell.wait()
