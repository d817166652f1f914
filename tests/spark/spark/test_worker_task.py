"""The start of every Python task (pipeline.spark.worker_task) with the speed-up gc_freeze: what earlier tasks left is
frozen out of the collector, so PySpark's gc.collect after each task only walks the task's own objects."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa

from pipeline.spark.speedups import ENV, forward
from pipeline.spark.worker_task import per_task

REPO = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent("""
    import gc
    import numba, pyarrow  # what a worker holds: tens of thousands of tracked objects
    from pipeline.spark.worker_task import per_task

    def body(batches):
        garbage = []
        garbage.append(garbage)  # a reference cycle made by the task: the collection after it must free it
        yield gc.get_freeze_count()

    before = gc.get_freeze_count()
    frozen = next(per_task(body)(iter([])))
    freed = gc.collect()  # what the PySpark daemon runs after each task
    print(before, frozen, freed, len(gc.get_objects()))  # get_objects: what a collection walks
""")


def test_a_task_freezes_what_came_before_it_and_its_own_garbage_is_still_collected():
    """In a fresh interpreter (gc.freeze is process-wide): the body runs after the freeze; the cycle the
    task made is collected by the next collection, which no longer walks the frozen objects."""
    env = {**os.environ, "PYTHONPATH": str(REPO), ENV: "gc_freeze"}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    before, frozen, freed, walked = map(int, out.stdout.split())
    assert before == 0 and frozen > 10_000
    assert freed >= 1
    assert walked < frozen // 20  # (a full collection with numba and pyarrow loaded took 10-70 ms)


def test_per_task_passes_the_batches_through():
    batches = [pa.record_batch({"x": [1, 2]}), pa.record_batch({"x": [3]})]
    doubled = per_task(lambda it: (pa.record_batch({"x": pa.compute.multiply(b["x"], 2)}) for b in it))
    assert [b["x"].to_pylist() for b in doubled(iter(batches))] == [[2, 4], [6]]


def test_every_task_in_a_spark_worker_starts_frozen(spark):
    """Real PySpark workers: each task of a per_task body sees the earlier objects frozen, and no row is lost."""

    def _freeze_counts(batches):  # defined here: pickled by value, not by this test module's name
        import gc

        rows = sum(b.num_rows for b in batches)
        yield pa.RecordBatch.from_pylist([{"frozen": gc.get_freeze_count(), "rows": rows}])

    # gc_freeze named here: the session is shared, and a run in this process may have forwarded its own speed-ups
    environment = spark.sparkContext.environment
    before = environment.get(ENV)
    forward(spark, ["gc_freeze"])
    try:
        df = spark.range(0, 1000, 1, 8).selectExpr("cast(id as string) as text")
        rows = df.mapInArrow(per_task(_freeze_counts), "frozen long, rows long").collect()
    finally:
        if before is None:
            environment.pop(ENV, None)
        else:
            environment[ENV] = before
    assert len(rows) == 8 and sum(r["rows"] for r in rows) == 1000
    assert all(r["frozen"] > 1000 for r in rows)


CHILD_COMMANDS = textwrap.dedent("""
    import gc, weakref
    from pipeline.spark.worker_task import per_task

    class Cyclic:  # a command holding a reference cycle, as a class shipped by value does
        def __init__(self):
            self.me = self

    class Plain:
        pass

    def outlives_its_task(command, wrap):
        \"\"\"Like a reused worker: the command runs (wrapped or not), is dropped, then the daemon collects.\"\"\"
        ref = weakref.ref(command)
        list(wrap(lambda it: iter(()))(iter([command])))
        del command
        gc.collect()
        return ref() is not None

    bare = lambda body: body
    print(outlives_its_task(Cyclic(), bare), outlives_its_task(Cyclic(), per_task))
    print(outlives_its_task(Plain(), per_task))
""")


def test_the_freeze_keeps_a_cyclic_command_of_its_task_and_frees_an_acyclic_one():
    """Why per_task wraps only the pipeline's own functions (pipeline/spark/worker_task.py): what is alive when a
    task starts is frozen, so a command that is a reference cycle outlives its task (it would not without the
    freeze); a command without a cycle is freed."""
    env = {**os.environ, "PYTHONPATH": str(REPO), ENV: "gc_freeze"}
    out = subprocess.run([sys.executable, "-c", CHILD_COMMANDS], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", "False"]


def test_pipeline_steps_wrap_only_module_functions_lambdas_and_partials():
    """per_task's argument at every call site in pipeline/: a lambda, a functools.partial or a module-level
    function, never a class or a function defined inside another (shipped by value, they can hold cycles)."""
    import ast

    offenders, sites = [], 0
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        tree = ast.parse(path.read_text())
        nested = {
            node.name
            for outer in ast.walk(tree)
            if isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(outer)
            if node is not outer and isinstance(node, (ast.FunctionDef, ast.ClassDef))
        }
        classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "per_task" and call.args):
                continue
            arg, sites = call.args[0], sites + 1
            ok = (
                isinstance(arg, ast.Lambda)
                or (isinstance(arg, ast.Name) and arg.id not in nested | classes)
                or (isinstance(arg, ast.Call) and getattr(arg.func, "id", None) == "partial")
            )
            if not ok:
                offenders.append(f"{path.relative_to(REPO)}:{call.lineno}")
    assert sites >= 10 and offenders == []
