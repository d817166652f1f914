"""The numba cache shipped with a job (``deploy/build_artifacts.sh --numba-cache``, issue #47): a fresh Python
worker, its copy of the zip and of the cache at paths of its own, loads the kernels and compiles none; a cache
that does not match (other sources, another CPU) compiles them, as without one.

The cache here is built by build_artifacts' own code with one MinHash call as its warm-up run (the sample run
it makes by default takes minutes); numba's dispatcher statistics say which kernels came from the cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from bench.standalone import Cluster
from deploy.build_artifacts import NUMBA_CACHE_NAME, build_numba_cache, build_zip
from deploy.spark_conf import with_numba_cache
from pipeline.numba_cache import MANIFEST, SHIPPED_VAR
from tests.cluster_runs import SPARK_SUBMIT, require_spark_submit
from tests.oracles import require_oracle

REPO = Path(__file__).resolve().parents[2]
JOB = REPO / "tests" / "numba_shipped_job.py"
WARMUP = "from pipeline.dedup.minhash import minhash_signatures; minhash_signatures(['a b c d e f g h'])"
# the job's task function, called in a plain process with the zip on its path (the tests directory only for it)
PROBE = (
    f"import json, sys; sys.path.insert(0, {str(JOB.parent)!r}); from numba_shipped_job import first_call; "
    "print(json.dumps(next(first_call([]))))"
)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zip and its numba cache (``numba-cache.tar.gz``), built for this interpreter and CPU."""
    require_oracle("numba")
    out = tmp_path_factory.mktemp("dist")
    build_zip(out)
    build_numba_cache(out, sys.executable, warmup=[sys.executable, "-c", WARMUP])
    return out


def _executor_dir(dist: Path, where: Path, zip_bytes: bytes | None = None) -> Path:
    """What an executor receives: its own copy of the zip and the cache unpacked beside it."""
    where.mkdir(parents=True)
    (where / "pretrain_pipeline.zip").write_bytes(zip_bytes or (dist / "pretrain_pipeline.zip").read_bytes())
    with tarfile.open(dist / f"{NUMBA_CACHE_NAME}.tar.gz") as tar:
        tar.extractall(where / "numba-cache", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return where


def _first_call(where: Path, shipped: bool, **env: str) -> dict:
    """The probe in a fresh process started in ``where``, an empty user cache, the shipped cache named or not."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and k not in (SHIPPED_VAR, "PYTHONPATH")}
    base.update(PYTHONPATH=str(where / "pretrain_pipeline.zip"), XDG_CACHE_HOME=str(where / "xdg"))
    base.update(PIPELINE_NUMBA_AFTER="0", **({SHIPPED_VAR: "numba-cache"} if shipped else {}), **env)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=where, env=base, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_build_writes_a_manifest_for_this_interpreter(dist: Path) -> None:
    import llvmlite.binding as ll
    import numba

    manifest = json.loads((dist / NUMBA_CACHE_NAME / MANIFEST).read_text())
    assert manifest["numba"] == numba.__version__
    assert manifest["python"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert manifest["cpu_name"] == ll.get_host_cpu_name()
    with tarfile.open(dist / f"{NUMBA_CACHE_NAME}.tar.gz") as tar:
        names = tar.getnames()
    assert MANIFEST in names and any(n.endswith(".nbi") for n in names)


def test_a_fresh_process_loads_the_kernels_from_the_shipped_cache_and_compiles_none(dist: Path, tmp_path: Path) -> None:
    shipped = _first_call(_executor_dir(dist, tmp_path / "executor-1"), shipped=True)
    alone = _first_call(_executor_dir(dist, tmp_path / "executor-2"), shipped=False)
    assert shipped["misses"] == 0 and shipped["hits"] > 0, shipped
    assert alone["misses"] > 0 and alone["hits"] == 0, alone  # without it the same call compiles
    assert shipped["signature"] == alone["signature"] == _python_path_signature()


def _python_path_signature() -> list[int]:
    """The probe's signature from the pure Python/numpy path (no numba) in this process."""
    from pipeline.dedup.minhash import minhash_signatures
    from pipeline.numba_backend import DEDUP

    previous = DEDUP.set(False)
    try:
        return [int(v) for v in minhash_signatures(["a b c d e f g h"])[0][:2]]
    finally:
        DEDUP.set(previous)


def test_a_cache_for_other_sources_or_another_cpu_compiles_instead(dist: Path, tmp_path: Path) -> None:
    other_cpu = _first_call(_executor_dir(dist, tmp_path / "cpu"), shipped=True, NUMBA_CPU_NAME="generic")
    assert other_cpu["misses"] > 0 and other_cpu["hits"] == 0, other_cpu
    edited = tmp_path / "edited.zip"
    shutil.copy2(dist / "pretrain_pipeline.zip", edited)
    with zipfile.ZipFile(edited, "a") as zf:  # another release of the package: one more module
        zf.writestr("pipeline/added_module.py", "VALUE = 1\n")
    other_sources = _first_call(_executor_dir(dist, tmp_path / "src", edited.read_bytes()), shipped=True)
    assert other_sources["misses"] > 0 and other_sources["hits"] == 0, other_sources
    assert other_cpu["signature"] == other_sources["signature"] == _python_path_signature()


def test_a_read_only_shipped_cache_is_copied_to_the_local_directory(
    dist: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """YARN localizes archives read-only: numba could neither test nor fill the directory, so the kernels are
    used from a copy under Spark's local directory, made once."""
    import pipeline.numba_cache as cache

    where = _executor_dir(dist, tmp_path / "executor")
    shipped = (where / "numba-cache").resolve()
    real_access = os.access
    monkeypatch.setattr(cache.os, "access", lambda p, m: Path(p) != shipped and real_access(p, m))
    monkeypatch.setattr(cache, "_keyed", None)
    monkeypatch.chdir(where)
    for name, value in ((SHIPPED_VAR, "numba-cache"), ("SPARK_LOCAL_DIRS", str(tmp_path / "local"))):
        monkeypatch.setenv(name, value)
    used = Path(cache.ensure_numba_cache_dir() or "")
    assert used.parent == tmp_path / "local" / cache.CACHE_NAME and used.name.startswith("shipped-")
    copied = sorted(p.relative_to(used) for p in used.rglob("*"))
    assert copied == sorted(p.relative_to(shipped) for p in shipped.rglob("*"))
    monkeypatch.setattr(cache, "_keyed", None)  # another Python worker of the executor: the same copy
    assert Path(cache.ensure_numba_cache_dir() or "") == used
    assert [p.name for p in used.parent.iterdir() if p.name != "numba"] == [used.name]


def test_a_cache_built_for_a_cpu_level_is_used_by_a_newer_cpu(dist: Path, tmp_path: Path) -> None:
    """``--numba-cpu x86-64-v3``: built for the level, not this machine's CPU; a machine with the level's
    features compiles for the level too, so it loads the kernels (an older one compiles its own)."""
    import llvmlite.binding as ll

    from pipeline.numba_cache import CPU_LEVELS

    host = ll.get_host_cpu_features()
    newer = all(host.get(f) for f in CPU_LEVELS["x86-64-v3"])
    level = tmp_path / "dist"
    level.mkdir()
    shutil.copy2(dist / "pretrain_pipeline.zip", level)
    build_numba_cache(level, sys.executable, cpu="x86-64-v3", warmup=[sys.executable, "-c", WARMUP])
    assert json.loads((level / NUMBA_CACHE_NAME / MANIFEST).read_text())["cpu_name"] == "x86-64-v3"
    loaded = _first_call(_executor_dir(level, tmp_path / "executor"), shipped=True)
    assert (loaded["misses"] == 0 and loaded["hits"] > 0) if newer else loaded["misses"] > 0, loaded
    assert loaded["signature"] == _python_path_signature()


@pytest.mark.spark
@pytest.mark.slow
def test_executors_of_a_standalone_cluster_compile_no_kernel_with_the_shipped_cache(dist: Path, tmp_path: Path) -> None:
    """spark-submit with ``--archives numba-cache.tar.gz#numba-cache`` and the executor setting deploy/ adds:
    every task's first kernel call is a cache hit; the same job without them compiles."""
    require_spark_submit()
    cluster = Cluster(tmp_path / "cluster", workers=1, cores=1, memory="1g")
    reports = {}
    try:
        cluster.start()
        for name, props in (("alone", {}), ("shipped", with_numba_cache({}, str(dist)))):
            props = {**props, "spark.executorEnv.PIPELINE_NUMBA_AFTER": "0", "spark.driver.host": "127.0.0.1"}
            for var in ("XDG_CACHE_HOME", "NUMBA_CACHE_DIR"):  # empty caches for each application
                props[f"spark.executorEnv.{var}"] = str(tmp_path / name / var.lower())
            confs = [a for k, v in props.items() for a in ("--conf", f"{k}={v}")]
            out = tmp_path / f"{name}.json"
            cmd = [str(SPARK_SUBMIT), "--master", cluster.url, "--executor-memory", "512m", *confs]
            cmd += ["--py-files", str(dist / "pretrain_pipeline.zip"), str(JOB), str(out)]
            done = subprocess.run(cmd, cwd=tmp_path, env=cluster.env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            reports[name] = json.loads(out.read_text())
    finally:
        cluster.stop()
    assert reports["shipped"] and all(r["misses"] == 0 and r["hits"] > 0 for r in reports["shipped"]), reports
    assert any(r["misses"] > 0 for r in reports["alone"]), reports  # a reused Python worker compiles only once


def _dry_run(*args: str) -> str:
    done = subprocess.run(["bash", *args, "--dry-run"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.replace("\\", "")


def test_the_deploy_scripts_ship_the_cache_only_when_asked() -> None:
    """``--numba-cache``: the archive in ``spark.archives`` (beside the packed environment's) and the executors'
    ``PIPELINE_NUMBA_SHIPPED`` naming where it is unpacked; without it, neither."""
    from deploy.dataproc.render_template import render

    archive = "pretrain/dist/numba-cache.tar.gz#numba-cache"
    dataproc = _dry_run("deploy/dataproc/create_cluster.sh", "--bucket", "b", "--deps", "env", "--numba-cache")
    assert f"spark:spark.archives=gs://b/pretrain/dist/env-py3.11.tar.gz#environment,gs://b/{archive}|" in dataproc
    assert "spark:spark.executorEnv.PIPELINE_NUMBA_SHIPPED=numba-cache" in dataproc
    emr = _dry_run("deploy/emr/run.sh", "create", "--bucket", "b", "--numba-cache")
    defaults = next(c for c in json.loads(emr[: emr.index("\n+ aws emr")]) if c["Classification"] == "spark-defaults")
    assert defaults["Properties"]["spark.archives"] == f"s3://b/{archive}"
    assert defaults["Properties"]["spark.executorEnv.PIPELINE_NUMBA_SHIPPED"] == "numba-cache"
    template = render("gs://b/pretrain", "b", str(REPO / "conf" / "dataproc.yaml"), numba_cache=True)
    props = template["placement"]["managedCluster"]["config"]["softwareConfig"]["properties"]
    assert props["spark:spark.archives"] == f"gs://b/{archive}"
    assert props["spark:spark.executorEnv.PIPELINE_NUMBA_SHIPPED"] == "numba-cache"
    plain = render("gs://b/pretrain", "b", str(REPO / "conf" / "dataproc.yaml"))
    plain_props = plain["placement"]["managedCluster"]["config"]["softwareConfig"]["properties"]
    assert not [k for k in plain_props if "archives" in k or "NUMBA" in k]
    assert "numba-cache" not in _dry_run("deploy/dataproc/create_cluster.sh", "--bucket", "b")
    assert "gs://b/pretrain/dist/numba-cache.tar.gz" in _dry_run("deploy/upload.sh", "--dest", "gs://b/pretrain")
