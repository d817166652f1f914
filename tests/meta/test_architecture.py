"""The package's architecture (issue #27), checked on the source (AST, nothing imported but the registry):

1. No import cycle between ``pipeline``'s subpackages, imports inside functions included.
2. At most :data:`MAX_LAZY` imports of our own modules inside functions (``importlib.import_module`` of a
   ``pipeline`` name counts too), each with a one-line reason: a comment on its line or the line above.
3. Only ``pipeline.run`` and ``pipeline.cli`` import ``pipeline.run`` (the runner is the roof).
4. A stage package (one whose ``stage.py`` defines ``STAGE``) imports no other stage's Spark module (its
   ``stage`` module or a module under its ``spark`` subpackage).
5. A stage's name that is not also a config section is spelled, as a string, only inside its own package.
6. Stages hand data on only through their declarations (``Stage.reads`` / ``Stage.passes``, wired by the runner):
   the run context carries nothing from one stage to the next (its ``__init__`` sets only :data:`CONTEXT_STATE`),
   no module outside ``pipeline.run`` and ``pipeline.logs`` sets an attribute of a ``ctx``, and a stage package
   reads no attribute of a ``ctx`` that :class:`RunContext` does not define.
7. ``pipeline.report`` imports no stage package and names no stage's table (a ``layout`` constant under a stage's
   ``writes`` or ``passes``) but those of :data:`REPORT_TABLES`: each stage gives its own report section
   (``Stage.report``), which reads its own tables. Nor does it spell a report.json entry a stage draws
   (``Stage.report_keys``) but as :data:`REPORT_ENTRIES` allows: each stage draws its own sections of the page
   (``Stage.report_html``).
8. ``pipeline/filter/`` holds the filter stage (at most :data:`MAX_FILTER_MODULES` modules) and, in ``rules/``, one
   module per filter (with its compiled twin, ``*_numba.py``, where it has one); borrowed libraries live in their
   own packages (the spaCy-rules English splitter in ``pipeline/text/english/``, the fastText predictor in
   ``pipeline/fasttext/``), each naming the library and version it reproduces.
9. ``tests/`` mirrors ``pipeline/``: every test file in ``unit/<package>/``, ``spark/<package>/``, ``e2e/`` or
   ``meta/`` (CONTRIBUTING.md, Tests), none directly in ``tests/``, no two with one name.
10. A stage package names another stage's table (a ``layout`` constant under that stage's ``writes`` or
   ``passes``) only when the table is data it declares reading (``Stage.reads`` / ``optional_reads``) that a
   stage before it passes under that name: no hand-off goes by a path nothing declares.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pipeline.config import PipelineConfig
from pipeline.run.registry import STAGES
from tests.meta.test_layering import _cycles, _import_nodes, _write_tree, import_graph, module_files, stage_packages

ROOT = Path(__file__).resolve().parents[2]
MAX_LAZY = 10
# what RunContext.__init__ may set: the config, the run directory, the lazy session and the Spark UI's job label
CONTEXT_STATE = {"config", "run_dir", "_spark", "job_description"}
CONTEXT_SETTERS = ("run", "logs")  # pipeline.run (the runner) and pipeline.logs (the job label) may set ctx.*
MAX_FILTER_MODULES = 13  # the stage plumbing (base class, redecide, report_section, report_html); filters: rules/
BORROWED = {"text/english": ("spaCy 3.8", "datatrove 0.10.1"), "fasttext": ("fastText 0.9.2", "fasttext-predict")}
# (stage package, the package of the later stage whose tables it names) -> why no declared read can carry them
LATER_TABLES = {
    ("train_classifier", "filter"): "its report section shows what the filter stage, which runs after it, did "
    "with the model (filter/documents/, dropped/, summary.json); a report is made once every stage has run",
}

# layout constant of a stage's table -> why report/ reads it itself (a figure of the whole run, no stage's section)
REPORT_TABLES = {
    "DOCUMENTS": "whether ingest left documents/, for the rejects' examples (report/examples.py)",
    "REJECTS": "the rejects' examples per source and reason: ingest has no report section of its own yet",
    "MEGATRON": "the tokens per source and their length histogram: the run's final files, read by the report itself",
}
# (report module, a report.json entry a stage draws) -> why the module spells it (rule 7)
REPORT_ENTRIES = {
    ("pipeline.report.data", "dedup"): "report.json's schema requires the entry: data.py seeds it empty until the "
    "dedup stage's section fills it (its shape, not its drawing)",
    ("pipeline.report.data", "blend"): "report.json's schema requires the entry: data.py seeds it null until the "
    "merge-blend stage's section fills it",
    ("pipeline.report.summary", "blend"): "the console summary's blend line reads the merge-blend stage's recorded "
    "counts (manifest.json), not report.json's entry: no stage hook draws console lines",
}


@dataclasses.dataclass(frozen=True)
class Flow:
    """One stage's declared data flow (rule 10): its package, the names it reads (optional ones too), the data it
    passes on (name -> table) and the run-directory parts it writes; and the report.json entries it draws (rule 7)."""

    package: str
    reads: tuple[str, ...] = ()
    passes: Mapping[str, str] = dataclasses.field(default_factory=dict)
    writes: tuple[str, ...] = ()
    draws: tuple[str, ...] = ()

    def owns(self, table: str) -> bool:
        """Whether ``table`` is one this stage writes or passes on (or lies inside one)."""
        return any(table == mine or table.startswith(mine + "/") for mine in (*self.writes, *self.passes.values()))


def _subpackage(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def subpackage_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles of the graph of subpackages (``pipeline.dedup.x -> pipeline.run.y`` is ``dedup -> run``)."""
    packages: dict[str, set[str]] = {}
    for name, targets in graph.items():
        edges = packages.setdefault(_subpackage(name), set())
        edges.update(_subpackage(t) for t in targets if t in graph and _subpackage(t) != _subpackage(name))
    return _cycles(packages)


def _own_module(node: ast.AST, name: str, modules: dict[str, Path]) -> bool:
    """Whether an import statement (or ``importlib.import_module("...")`` call) names one of our modules."""
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] == name.split(".")[0]
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == name.split(".")[0] for alias in node.names)
    if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
        first = node.args[0] if node.args else None
        return isinstance(first, ast.Constant) and str(first.value).startswith((name.split(".")[0], "."))
    return False


def lazy_imports(root: Path, package: str = "pipeline") -> list[tuple[str, int, bool]]:
    """(module, line, has a reason) of every import of our own modules made inside a function."""
    modules = module_files(root, package)
    found = []
    for name, path in modules.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            nodes = [n for n in _import_nodes(func) if n is not func] + [
                n for n in ast.walk(func) if isinstance(n, ast.Call)
            ]
            for node in nodes:
                if _own_module(node, name, modules):
                    line = node.lineno
                    reason = "#" in lines[line - 1] or lines[line - 2].strip().startswith("#")
                    found.append((name, line, reason))
    return sorted(set(found))


def _is_spark_module(name: str, stage_package: str, package: str = "pipeline") -> bool:
    prefix = f"{package}.{stage_package}"
    return name == f"{prefix}.stage" or name == f"{prefix}.spark" or name.startswith(f"{prefix}.spark.")


def string_literals(root: Path, package: str = "pipeline") -> dict[str, set[str]]:
    """Module -> every string constant in it."""
    found: dict[str, set[str]] = {}
    for name, path in module_files(root, package).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found[name] = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return found


def context_api(root: Path, package: str = "pipeline") -> tuple[set[str], set[str]]:
    """(what RunContext.__init__ sets on self, every public name the class defines), from its source."""
    tree = ast.parse((root / package / "stage_api" / "context.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RunContext")
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    state = {
        t.attr
        for n in ast.walk(init)
        if isinstance(n, (ast.Assign, ast.AnnAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }
    methods = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return state, {name for name in state | methods if not name.startswith("_")}


def context_uses(root: Path, package: str = "pipeline") -> list[tuple[str, str, bool]]:
    """(module, attribute, set) of every ``ctx.<attribute>`` read or set in the package."""
    found = []
    for name, path in module_files(root, package).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ctx":
                found.append((name, node.attr, isinstance(node.ctx, ast.Store)))
    return sorted(set(found))


def layout_tables(root: Path, package: str = "pipeline") -> dict[str, str]:
    """Every string constant of the run directory's layout (``stage_api/layout.py``), by name."""
    tree = ast.parse((root / package / "stage_api" / "layout.py").read_text(encoding="utf-8"))
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def layout_names(path: Path) -> set[str]:
    """The layout constants a module names: ``layout.NAME``, or ``NAME`` imported from a ``layout`` module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") == "layout"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "layout":
            found.update(alias.name for alias in node.names)
    return found


def undeclared_tables(
    root: Path, flows: Sequence[Flow], tables: Mapping[str, str], package: str = "pipeline"
) -> list[str]:
    """Rule 10: each module of a stage package naming another stage's table that is not data it declares
    reading from a stage before it (``flows``: the stages in run order)."""
    problems = []
    modules = module_files(root, package)
    for index, flow in enumerate(flows):
        handed = {table for before in flows[:index] for name, table in before.passes.items() if name in flow.reads}
        for name, path in sorted(modules.items()):
            if _subpackage(name) != flow.package:
                continue
            for constant in sorted(layout_names(path)):
                table = tables.get(constant)
                if table is None or flow.owns(table) or table in handed:
                    continue
                for owner in (f for f in flows if f is not flow and f.owns(table)):
                    if (flow.package, owner.package) not in LATER_TABLES:
                        problems.append(
                            f"{name} opens {owner.package}'s table {table!r} (layout.{constant}) without declaring "
                            "it: name it in Stage.reads and open the Data the runner hands on"
                        )
    return problems


def _flows() -> list[Flow]:
    """The registered stages' declarations, in run order."""
    return [
        Flow(type(s).__module__.split(".")[1], (*s.reads, *s.optional_reads), dict(s.passes), s.writes, s.report_keys)
        for s in STAGES
    ]


def violations(
    root: Path,
    stage_names: dict[str, str],
    sections: set[str],
    package: str = "pipeline",
    context: tuple[set[str], set[str]] | None = None,
    flows: Sequence[Flow] | None = None,
    tables: Mapping[str, str] | None = None,
) -> list[str]:
    """Every broken rule, one line each; ``stage_names`` maps a stage's name to its package; ``context``: what
    the run context sets and offers (default: read from ``stage_api/context.py``); ``flows``, ``tables``: the
    stages' declared data flow and the layout's names (default: the registry's and ``stage_api/layout.py``'s)."""
    graph = import_graph(root, package)
    problems = [f"subpackage cycle: {' <-> '.join(c)}" for c in subpackage_cycles(graph)]
    lazy = lazy_imports(root, package)
    if len(lazy) > MAX_LAZY:
        problems.append(f"{len(lazy)} lazy imports of {package} modules (at most {MAX_LAZY}): {lazy}")
    problems += [f"lazy import without a reason: {m} line {line}" for m, line, why in lazy if not why]
    roof = (f"{package}.run", f"{package}.cli")
    for name, targets in sorted(graph.items()):
        if name.startswith(roof) or name == f"{package}.__main__":
            continue
        for target in sorted(t for t in targets if t == roof[0] or t.startswith(roof[0] + ".")):
            problems.append(f"{name} imports {target} (only {package}.run and {package}.cli may)")
    stages = stage_packages(root, package)
    for name, targets in sorted(graph.items()):
        own = _subpackage(name)
        if own not in stages:
            continue
        for target in sorted(targets):
            other = _subpackage(target)
            if other in stages and other != own and _is_spark_module(target, other, package):
                problems.append(f"{name} imports another stage's Spark module {target}")
    literals = string_literals(root, package)
    for stage_name, home in sorted(stage_names.items()):
        if stage_name in sections:
            continue
        for name, found in sorted(literals.items()):
            if stage_name in found and _subpackage(name) != home:
                problems.append(f"{name} spells the stage name {stage_name!r} (only {package}.{home} may)")
    state, api = context or context_api(root, package)
    problems += [f"RunContext sets {a} (only {sorted(CONTEXT_STATE)})" for a in sorted(state - CONTEXT_STATE)]
    for name, attr, stored in context_uses(root, package):
        if stored and _subpackage(name) not in CONTEXT_SETTERS:
            problems.append(f"{name} leaves ctx.{attr} on the run context (a stage hands data on by Stage.passes)")
        elif not stored and _subpackage(name) in stages and attr not in api:
            problems.append(f"{name} reads ctx.{attr}, which the run context does not offer")
    for name, targets in sorted(graph.items()):
        if _subpackage(name) == "report":
            problems += [f"{name} imports the stage package {t}" for t in sorted(targets) if _subpackage(t) in stages]
    flows = _flows() if flows is None else flows
    tables = layout_tables(root, package) if tables is None else tables
    problems += undeclared_tables(root, flows, tables) + report_tables(root, flows, tables, package)
    return problems + report_entries(literals, flows)


def report_entries(literals: Mapping[str, set[str]], flows: Sequence[Flow]) -> list[str]:
    """Rule 7's last part: each module of ``report`` spelling a report.json entry a stage draws itself
    (``Stage.report_keys``) but as :data:`REPORT_ENTRIES` allows (the stage's own ``report_html`` draws it)."""
    return [
        f"{name} spells {flow.package}'s report.json entry {entry!r}: the stage draws it (Stage.report_html)"
        for name, found in sorted(literals.items())
        if _subpackage(name) == "report"
        for flow in flows
        for entry in flow.draws
        if entry in found and (name, entry) not in REPORT_ENTRIES
    ]


def report_tables(root: Path, flows: Sequence[Flow], tables: Mapping[str, str], package: str = "pipeline") -> list[str]:
    """Rule 7's second half: each module of ``report`` naming a stage's table not listed in :data:`REPORT_TABLES`
    (a stage's section belongs in its own package, ``Stage.report``)."""
    problems = []
    for name, path in sorted(module_files(root, package).items()):
        if _subpackage(name) != "report":
            continue
        for constant in sorted(layout_names(path) - set(REPORT_TABLES)):
            table = tables.get(constant)
            for owner in (f for f in flows if table is not None and f.owns(table)):
                problems.append(
                    f"{name} names {owner.package}'s table {table!r} (layout.{constant}): the stage's own report "
                    "section (Stage.report) reads it"
                )
    return problems


def _registered() -> dict[str, str]:
    return {s.name: type(s).__module__.split(".")[1] for s in STAGES}


def _config_sections() -> set[str]:
    return {f.name for f in dataclasses.fields(PipelineConfig)}


def test_the_package_keeps_its_architecture() -> None:
    assert violations(ROOT, _registered(), _config_sections()) == []


def test_the_rules_bite_on_the_real_tree() -> None:
    """What the rules count exists: stage packages are found, and the lazy imports left have reasons."""
    assert {"ingest", "dedup", "tokenize", "merge_blend", "train_tokenizer"} <= stage_packages(ROOT)
    assert "merge-blend" not in _config_sections() and "train-tokenizer" not in _config_sections()
    assert all(why for _, _, why in lazy_imports(ROOT))
    state, api = context_api(ROOT)
    assert state == CONTEXT_STATE and {"config", "read_table", "write_table", "spark"} <= api
    assert "passed_on" not in api and "results" not in api  # the hand-offs of 7ffb06c are gone
    reads = {(m, a) for m, a, stored in context_uses(ROOT) if not stored}
    assert ("pipeline.dedup.stage", "read_table") in reads  # stage code is among the modules checked
    tables = layout_tables(ROOT)  # rule 10 sees the layout and the names a stage package gives
    assert tables["CLUSTER_SIZES"] == "dedup/cluster_sizes" and tables["SURVIVORS"] == "dedup/survivors"
    assert "SURVIVORS" in layout_names(ROOT / "pipeline" / "spans" / "report_section.py")  # declared: spans reads it
    assert {f.package for f in _flows()} == stage_packages(ROOT)
    assert {"filter", "dedup", "spans"} <= {entry for f in _flows() for entry in f.draws}  # rule 7 sees the entries
    literals = string_literals(ROOT)
    assert all(entry in literals[module] for module, entry in REPORT_ENTRIES)  # each allowance is still needed
    assert set(LATER_TABLES) <= {(a.package, b.package) for i, a in enumerate(_flows()) for b in _flows()[i + 1 :]}


def test_the_filter_package_holds_the_stage_and_its_rules() -> None:
    filter_dir = ROOT / "pipeline" / "filter"
    modules = sorted(p.name for p in filter_dir.glob("*.py"))
    assert len(modules) <= MAX_FILTER_MODULES, modules
    assert {p.name for p in filter_dir.iterdir() if p.is_dir() and p.name != "__pycache__"} == {"rules", "spark"}
    rules = sorted(p for p in (filter_dir / "rules").glob("*.py") if p.name != "__init__.py")
    borrowed = (
        "spacy",
        "english",
        "fasttext_model",
        "fasttext_predict",
        "fasttext_numba",
    )  # now pipeline/text, fasttext
    assert not any(p.name.startswith(borrowed) for p in [*filter_dir.glob("*.py"), *rules])
    for path in rules:  # one filter a module: it registers exactly one, or is the compiled twin of one that does
        registered = path.read_text(encoding="utf-8").count("\n@register(")
        assert registered == 1 or path.name.endswith("_numba.py") and registered == 0, path.name
    assert len(rules) >= 6
    for package, names in BORROWED.items():
        doc = ast.get_docstring(ast.parse((ROOT / "pipeline" / package / "__init__.py").read_text(encoding="utf-8")))
        assert doc and all(name in doc for name in names), package


CLEAN = {
    "pipeline/__init__.py": "",
    "pipeline/cli/__init__.py": "",
    "pipeline/cli/main.py": "from pipeline.run import runner\n",
    "pipeline/run/__init__.py": "",
    "pipeline/run/runner.py": "from pipeline.alpha.stage import STAGE\nfrom pipeline.beta.stage import STAGE as B\n",
    "pipeline/api/__init__.py": "",
    "pipeline/api/stage.py": "class Stage: ...\n",
    "pipeline/alpha/__init__.py": "",
    "pipeline/alpha/kernel.py": "def f():\n    # numba compiles on first use\n    from pipeline.alpha import fast\n",
    "pipeline/alpha/fast.py": "",
    "pipeline/alpha/stage.py": "from pipeline.api.stage import Stage\nSTAGE = Stage('alpha-one')\n",
    "pipeline/beta/__init__.py": "",
    "pipeline/beta/stage.py": "from pipeline.alpha.kernel import f\nSTAGE = 1\n"
    "def run(ctx):\n    ctx.read_table(layout.OUT)\n",  # alpha's table it declares reading
    "pipeline/report/__init__.py": "",
    "pipeline/report/data.py": "from pipeline.api.stage import Stage\n",
}
CONTEXT = ({"config"}, {"config", "read_table"})
NAMES = {"alpha-one": "alpha", "beta": "beta"}
# alpha writes alpha/ and passes its "out" table on; beta reads it, writes beta/
FLOWS = [
    Flow("alpha", passes={"out": "alpha/out"}, writes=("alpha",), draws=("alpha_figures",)),
    Flow("beta", reads=("out",), writes=("beta",)),
]
TABLES = {"OUT": "alpha/out", "SIDE": "alpha/side", "BETA_OUT": "beta/out", "MANIFEST": "manifest.json"}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"pipeline/api/stage.py": "def g():\n    # why\n    from pipeline.alpha import kernel\n"}, "subpackage cycle"),
        ({"pipeline/alpha/kernel.py": "def f():\n    from pipeline.alpha import fast\n"}, "lazy import without"),
        (
            {"pipeline/alpha/kernel.py": "def f():\n" + "    import pipeline.alpha.fast  # r\n" * (MAX_LAZY + 1)},
            "11 lazy imports",
        ),
        (
            {"pipeline/alpha/kernel.py": "import importlib\ndef f():\n    importlib.import_module('pipeline.a')\n"},
            "lazy import without a reason: pipeline.alpha.kernel line 3",
        ),
        ({"pipeline/beta/stage.py": "from pipeline.run import runner\n"}, "pipeline.beta.stage imports pipeline.run"),
        (
            {"pipeline/beta/stage.py": "from pipeline.alpha.stage import STAGE as A\nSTAGE = 1\n"},
            "pipeline.beta.stage imports another stage's Spark module pipeline.alpha.stage",
        ),
        ({"pipeline/beta/x.py": "from pipeline.alpha.spark.job import go\n", "pipeline/alpha/spark/job.py": ""},
         "pipeline.beta.x imports another stage's Spark module pipeline.alpha.spark.job"),
        ({"pipeline/run/report.py": "NAME = 'alpha-one'\n"}, "pipeline.run.report spells the stage name 'alpha-one'"),
        ({"pipeline/alpha/stage.py": "def run(ctx):\n    ctx.passed_on = 'x'\n"},
         "pipeline.alpha.stage leaves ctx.passed_on on the run context"),
        ({"pipeline/beta/stage.py": "STAGE = 1\ndef run(ctx):\n    return ctx.read_table(ctx.passed_on)\n"},
         "pipeline.beta.stage reads ctx.passed_on, which the run context does not offer"),
        ({"pipeline/report/data.py": "from pipeline.alpha import kernel\n"},
         "pipeline.report.data imports the stage package pipeline.alpha"),
        ({"pipeline/report/alpha_data.py": "def section(run):\n    return join(run, layout.SIDE)\n"},
         "pipeline.report.alpha_data names alpha's table 'alpha/side' (layout.SIDE)"),
        ({"pipeline/report/alpha_html.py": "def parts(data):\n    return [str(data['alpha_figures'])]\n"},
         "pipeline.report.alpha_html spells alpha's report.json entry 'alpha_figures'"),
        ({"pipeline/beta/rehydrate.py": "def sizes(run):\n    return join(run, layout.SIDE)\n"},
         "pipeline.beta.rehydrate opens alpha's table 'alpha/side' (layout.SIDE) without declaring it"),
        ({"pipeline/beta/stage.py": "from pipeline.api.layout import MANIFEST, SIDE\nSTAGE = 1\n"},
         "pipeline.beta.stage opens alpha's table 'alpha/side' (layout.SIDE)"),
        ({"pipeline/alpha/kernel.py": "def f(run):\n    return join(run, layout.BETA_OUT)\n"},
         "pipeline.alpha.kernel opens beta's table 'beta/out' (layout.BETA_OUT)"),
    ],
)  # fmt: skip
def test_a_violation_is_reported(tmp_path: Path, change: dict[str, str], expected: str) -> None:
    clean = _write_tree(tmp_path / "clean", CLEAN)
    assert violations(clean, NAMES, {"beta"}, context=CONTEXT, flows=FLOWS, tables=TABLES) == []
    broken = _write_tree(tmp_path / "broken", {**CLEAN, **change})
    found = violations(broken, NAMES, {"beta"}, context=CONTEXT, flows=FLOWS, tables=TABLES)
    assert any(line.startswith(expected) for line in found), found


# A timing figure: a number with a time unit ("~6 s", "0.1 CPU s", "60-70 ms"), a throughput ("6.6 MB/s") or a
# speed-up ("3x faster"). Figures go stale in a docstring; they live in docs/benchmarks-history.md (issue #42).
TIMING_FIGURE = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:CPU\s)?(?:s|ms|µs|ns|seconds?|minutes?)\b"
    r"|\b(?:[kMG]i?B)/s\b"
    r"|\b\d+(?:\.\d+)?\s?(?:x|×)\s+(?:faster|slower|quicker)\b"
)


def timing_figures(package: Path) -> list[str]:
    """Each docstring of a module, class or function under ``package`` naming a timing figure, as path:line: text."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node, clean=False)
            for match in TIMING_FIGURE.finditer(doc or ""):
                line = node.body[0].lineno + doc[: match.start()].count("\n")  # type: ignore[index]
                found.append(f"{path.relative_to(package.parent)}:{line}: {match[0]!r}")
    return found


def test_no_docstring_carries_a_timing_figure(tmp_path: Path) -> None:
    """No docstring under pipeline/ names a timing, a throughput or a speed-up (docs/benchmarks-history.md holds
    them); the pattern catches each kind and leaves sizes, hex and names alone."""
    assert timing_figures(ROOT / "pipeline") == []
    figures = ["~6 s", "0.45 s of CPU", "about 0.1 CPU second", "60-70 ms", "6.6 MB/s", "3x faster", "15 seconds"]
    plain = ["0x110000", "int64s", "k8s://", "3 sources", "2 MB of input", "4 ms_per", "10x its size"]
    (tmp_path / "pkg").mkdir()
    for i, text in enumerate(figures + plain):
        (tmp_path / "pkg" / f"m{i}.py").write_text(f'"""A module: {text}."""\n')
    assert [hit.split(":")[0] for hit in timing_figures(tmp_path / "pkg")] == [
        f"pkg/m{i}.py" for i in range(len(figures))
    ]


TEST_KINDS = {"unit": True, "spark": True, "e2e": False, "meta": False}  # tests/<kind>/, True: one folder per package
TOP_LEVEL_TESTS = "core"  # tests/unit/core/ and tests/spark/core/: the modules directly in pipeline/ (secrets, numba_*)


def misplaced_test_files(tests: Path, packages: set[str]) -> list[str]:
    """Test files outside the layout (CONTRIBUTING.md, Tests): ``unit/<package>/``, ``spark/<package>/``,
    ``e2e/`` or ``meta/``, <package> a package of ``pipeline/`` or ``core``; and basenames used twice (pytest
    imports a test file by its basename)."""
    wrong, seen = [], set()
    for path in sorted(tests.rglob("test_*.py")):
        parts = path.relative_to(tests).parts
        by_package = TEST_KINDS.get(parts[0]) if len(parts) > 1 else None
        if by_package is None or len(parts) != (3 if by_package else 2):
            wrong.append(path.relative_to(tests).as_posix())
        elif by_package and parts[1] not in packages | {TOP_LEVEL_TESTS}:
            wrong.append(path.relative_to(tests).as_posix())
        elif path.name in seen:
            wrong.append(f"{path.relative_to(tests).as_posix()} (its name again)")
        seen.add(path.name)
    return wrong


def test_every_test_file_sits_in_the_layout(tmp_path):
    """9. tests/ mirrors pipeline/: no test file directly in tests/ or in a folder outside the layout."""
    packages = {p.name for p in (ROOT / "pipeline").iterdir() if (p / "__init__.py").is_file()}
    assert misplaced_test_files(ROOT / "tests", packages) == []
    for name in (
        "test_new.py",
        "unit/test_flat.py",
        "unit/nopackage/test_x.py",
        "spark/run/deep/test_y.py",
        "e2e/run/test_z.py",
        "other/test_w.py",
        "unit/run/test_ok.py",
        "meta/test_ok2.py",
        "e2e/test_ok2.py",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert misplaced_test_files(tmp_path, {"run"}) == [
        "e2e/run/test_z.py",
        "meta/test_ok2.py (its name again)",
        "other/test_w.py",
        "spark/run/deep/test_y.py",
        "test_new.py",
        "unit/nopackage/test_x.py",
        "unit/test_flat.py",
    ]


def test_a_unit_test_asking_for_spark_is_stopped_before_its_fixtures():
    """9. tests/unit/conftest.py fails a unit test that uses the ``spark`` fixture (directly or through another
    fixture) or the ``spark`` marker before Spark starts; one that starts a SparkContext fails after it ran."""
    from types import SimpleNamespace

    from tests.unit.conftest import spark_use

    def item(fixturenames: list[str], marked: bool = False) -> SimpleNamespace:
        return SimpleNamespace(fixturenames=fixturenames, get_closest_marker=lambda name: marked or None)

    assert spark_use(item(["tmp_path", "spark"])) == "uses the spark fixture"
    assert spark_use(item(["tmp_path"], marked=True)) == "is marked spark"
    assert spark_use(item(["tmp_path", "shared_fixtures"])) is None
