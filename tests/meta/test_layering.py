"""The package's layering, checked on the import statements of every module (AST, nothing imported).

Rules:
1. Kernels and Arrow batch functions never reach pyspark. Spark glue is known by its place, not by a
   list: a stage package's ``stage`` module, anything under a ``spark`` subpackage of a stage package
   (``pipeline/dedup/spark/``, ``pipeline/dedup/index/spark/``), and ``pipeline.spark``. Every other
   module of a stage or format package imports no pyspark, directly or through other ``pipeline`` modules.
2. Only ``pipeline.__main__`` and ``pipeline.cli`` itself import ``pipeline.cli`` (jobs/ are outside).
3. No import cycles among ``pipeline`` modules, counting imports inside functions too (a deferred
   import that dodges a cycle at run time is still a cycle in the design). Imports under
   ``if TYPE_CHECKING:`` are left out.
4. The top-level packages import downward only: ``pipeline`` (the product) imports neither ``corpora`` nor
   ``bench``, ``corpora`` (the benches' and tests' corpora) imports no ``bench``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the packages of kernels the stages share (format readers and writers, text and model code), beside the stages'
LIBRARY_PACKAGES = ("sources", "tokenizer", "megatron", "blend", "decontaminate", "text", "fasttext")
SPARK_ROOTS = ("pyspark", "graphframes")


def stage_packages(root: Path, package: str = "pipeline") -> set[str]:
    """Subpackages whose ``stage.py`` defines ``STAGE``."""
    found = set()
    for path in (root / package).glob("*/stage.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "STAGE" for t in n.targets) for n in tree.body
        ):
            found.add(path.parent.name)
    return found


# every stage package and the library packages: their modules other than Spark glue are kernels (rule 1)
KERNEL_PACKAGES = tuple(sorted(stage_packages(ROOT) | set(LIBRARY_PACKAGES)))


def module_files(root: Path, package: str = "pipeline") -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` below ``root/package`` (``__init__`` = the package)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those under ``if TYPE_CHECKING:``."""
    out: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if _type_checking_block(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules ``name`` imports: ``pipeline`` modules resolved to the module (or package) imported,
    third-party ones as their top-level name."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for target in targets:
            if target.split(".")[0] != name.split(".")[0]:
                found.add(target.split(".")[0])
                continue
            while target not in modules and "." in target:  # `import pipeline.a.b` of an attribute
                target = target.rsplit(".", 1)[0]
            if target != name:
                found.add(target)
    return found


def import_graph(root: Path, package: str = "pipeline") -> dict[str, set[str]]:
    modules = module_files(root, package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _reaches(graph: dict[str, set[str]], start: str, targets: tuple[str, ...]) -> list[str] | None:
    """An import chain from ``start`` to one of ``targets`` (third-party names), or None."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w in targets:
                return paths[v] + [w]
            if w in graph and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return None


def is_spark_glue(name: str, package: str = "pipeline") -> bool:
    """Spark code by the rule: a ``stage`` module, a module under a ``spark`` subpackage of a stage package,
    or ``pipeline.spark`` itself."""
    parts = name.split(".")
    return parts[0] == package and (parts[-1] == "stage" or "spark" in parts[1:])


def is_kernel_module(name: str, package: str = "pipeline") -> bool:
    """A module of a stage or format package that must not reach Spark."""
    parts = name.split(".")
    if len(parts) < 3 or parts[1] not in KERNEL_PACKAGES:
        return False
    return not is_spark_glue(name, package)


def violations(root: Path, package: str = "pipeline") -> list[str]:
    """Every broken layering rule, one line each (empty when the tree is clean)."""
    graph = import_graph(root, package)
    problems = []
    for name in sorted(graph):
        if is_kernel_module(name, package):
            chain = _reaches(graph, name, SPARK_ROOTS)
            if chain:
                problems.append(f"kernel module reaches Spark: {' -> '.join(chain)}")
        cli = f"{package}.cli"
        allowed = name == f"{package}.__main__" or name == cli or name.startswith(cli + ".")
        if not allowed and any(t == cli or t.startswith(cli + ".") for t in graph[name]):
            problems.append(f"{name} imports {cli} (only {package}.__main__ and jobs/ may)")
    problems += [f"import cycle: {' <-> '.join(c)}" for c in _cycles(graph)]
    return problems


def test_the_package_keeps_its_layering() -> None:
    assert violations(ROOT) == []


TOP_LEVEL = ("pipeline", "corpora", "bench")  # each may import the ones before it (rule 4)


def top_level_violations(root: Path) -> list[str]:
    """Imports of a later package of TOP_LEVEL by a module of an earlier one, one line each."""
    return [
        f"{name} imports {later}"
        for rank, package in enumerate(TOP_LEVEL)
        for name, targets in sorted(import_graph(root, package).items())
        for later in TOP_LEVEL[rank + 1 :]
        if later in targets
    ]


def test_top_level_packages_import_downward_only(tmp_path: Path) -> None:
    """4. On the real tree nothing imports upward; planted upward imports are each reported, downward ones not."""
    assert top_level_violations(ROOT) == []
    planted = {
        "pipeline": "import corpora.real\n",
        "corpora": "from bench.harness import DATA\nimport pipeline\n",
        "bench": "from corpora import real\nimport pipeline\n",
    }
    for package, text in planted.items():
        (tmp_path / package).mkdir()
        (tmp_path / package / "m.py").write_text(text)
    assert top_level_violations(tmp_path) == ["pipeline.m imports corpora", "corpora.m imports bench"]


def test_kernel_and_batch_modules_exist_and_are_checked() -> None:
    """The rules bite on real modules: every stage package's kernels and batches count as kernels."""
    names = set(module_files(ROOT))
    for module in (
        "pipeline.sources.batches",
        "pipeline.dedup.batches",
        "pipeline.tokenize.batches",
        "pipeline.tokenize.tasks",
        "pipeline.dedup.minhash",
        "pipeline.tokenizer.bpe",
        "pipeline.megatron.writer",
        "pipeline.blend.indices",
        "pipeline.decontaminate.ngrams",
        "pipeline.decontaminate.batches",
        "pipeline.dedup.index.batches",
        "pipeline.dedup.index.head",
        "pipeline.filter.batches",
        "pipeline.filter.rules.c4",
        "pipeline.text.english.words",
        "pipeline.text.repetition",
        "pipeline.fasttext.predict",
        "pipeline.train_classifier.prepare",
        "pipeline.train_tokenizer.batches",
        "pipeline.training_indices.gpt_indices",
        "pipeline.spans.exact",
    ):
        assert module in names and is_kernel_module(module), module
    assert {"train_classifier", "train_tokenizer", "training_indices"} <= set(KERNEL_PACKAGES)
    for module in (
        "pipeline.dedup.stage",
        "pipeline.filter.stage",
        "pipeline.dedup.spark.components",
        "pipeline.dedup.index.spark.lookup",
        "pipeline.decontaminate.spark.step",
        "pipeline.spark.worker_task",
    ):
        assert module in names and is_spark_glue(module) and not is_kernel_module(module), module
    assert not is_kernel_module("pipeline.run.runner")
    # a module's name alone does not make it glue: only the place does
    assert is_kernel_module("pipeline.dedup.sparkline") and is_kernel_module("pipeline.dedup.index.stages")


def _write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


CLEAN = {
    "pipeline/__init__.py": "",
    "pipeline/__main__.py": "from pipeline.cli.commands import main\n",
    "pipeline/cli/__init__.py": "",
    "pipeline/cli/commands.py": "from pipeline.run import runner\n",
    "pipeline/run/__init__.py": "",
    "pipeline/run/runner.py": "from pipeline.dedup import stage\n",
    "pipeline/dedup/__init__.py": "from .minhash import sig\n",
    "pipeline/dedup/minhash.py": "import numpy as np\n\ndef sig():\n    from . import bands\n",
    "pipeline/dedup/bands.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pyspark\n",
    "pipeline/dedup/batches.py": "from pipeline.dedup.minhash import sig\n",
    "pipeline/dedup/stage.py": "from pyspark.sql import functions as F\nfrom pipeline.dedup import batches\n"
    "from pipeline.dedup.spark.edges import f\nfrom pipeline.dedup.index.spark.lookup import g\n",
    "pipeline/dedup/spark/__init__.py": "",
    "pipeline/dedup/spark/edges.py": "from pyspark.sql import DataFrame\nfrom pipeline.dedup.batches import x\n",
    "pipeline/dedup/index/__init__.py": "",
    "pipeline/dedup/index/head.py": "import json\n",
    "pipeline/dedup/index/spark/__init__.py": "",
    "pipeline/dedup/index/spark/lookup.py": "import pyspark.sql\nfrom pipeline.dedup.index import head\n",
    "pipeline/spark/__init__.py": "",
    "pipeline/spark/session.py": "from pyspark.sql import SparkSession\n",
}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"pipeline/dedup/batches.py": "import pyspark.sql\n"}, "kernel module reaches Spark: pipeline.dedup.batches"),
        (  # Spark code outside stage.py and spark/: its place is wrong, whatever its name
            {"pipeline/dedup/edge_tables.py": "from pyspark.sql import DataFrame\n"},
            "kernel module reaches Spark: pipeline.dedup.edge_tables -> pyspark",
        ),
        (
            {"pipeline/dedup/index/head.py": "from pipeline.dedup.index.spark import lookup\n"},
            "kernel module reaches Spark: pipeline.dedup.index.head -> pipeline.dedup.index.spark.lookup -> pyspark",
        ),
        (  # a kernel reaching Spark glue through a spark/ subpackage
            {"pipeline/dedup/minhash.py": "from pipeline.dedup.spark.edges import f\n"},
            "kernel module reaches Spark: pipeline.dedup.batches -> pipeline.dedup.minhash"
            " -> pipeline.dedup.spark.edges -> pyspark",
        ),
        (
            {"pipeline/dedup/bands.py": "from pipeline.spark import session\n"},
            "kernel module reaches Spark: pipeline.dedup.bands -> pipeline.spark.session -> pyspark",
        ),
        (
            {"pipeline/dedup/bands.py": "def f():\n    from pyspark import TaskContext\n"},
            "kernel module reaches Spark: pipeline.dedup.batches -> pipeline.dedup.minhash -> pipeline.dedup.bands",
        ),
        (
            {"pipeline/dedup/minhash.py": "from pipeline.dedup.stage import x\n"},
            "kernel module reaches Spark: pipeline.dedup.batches -> pipeline.dedup.minhash -> pipeline.dedup.stage",
        ),
        (
            {"pipeline/dedup/stage.py": "from pipeline.cli.commands import main\n"},
            "pipeline.dedup.stage imports pipeline.cli",
        ),
        ({"pipeline/run/runner.py": "import pipeline.cli\n"}, "pipeline.run.runner imports pipeline.cli"),
        (
            {"pipeline/dedup/bands.py": "def f():\n    from pipeline.dedup import batches\n"},
            "import cycle: pipeline.dedup.bands <-> pipeline.dedup.batches <-> pipeline.dedup.minhash",
        ),
        (
            {
                "pipeline/run/report.py": "from pipeline.run.runner import NAMES\n",
                "pipeline/run/runner.py": "from pipeline.run import report\n",
            },
            "import cycle: pipeline.run.report <-> pipeline.run.runner",
        ),
    ],
)
def test_a_violation_is_reported(tmp_path: Path, change: dict[str, str], expected: str) -> None:
    assert violations(_write_tree(tmp_path / "clean", CLEAN)) == []
    broken = _write_tree(tmp_path / "broken", {**CLEAN, **change})
    found = violations(broken)
    assert any(line.startswith(expected) for line in found), found
