"""Build what a cluster needs from this checkout (run by ``deploy/build_artifacts.sh``).

Writes into ``--out`` (default ``dist/``)::

    pretrain_pipeline.zip                      the pure-Python ``pipeline`` package for ``--py-files``
                                               (docs/running.md, Cluster and storage)
    spark_pretrain_pipeline-<v>-py3-none-any.whl   built by PyPA ``build`` (``python -m build``)
    requirements-cluster.txt                   the wheel's dependencies minus what the cluster provides
    wheelhouse/                                with ``--wheelhouse``: every dependency as a wheel
    numba-cache.tar.gz                         with ``--numba-cache``: the package's numba kernels compiled
                                               by this interpreter on this CPU, for ``--archives``

This module is build tooling: it lives outside the ``pipeline`` package, so it never ships in the zip.
Only the project's own sources go into the zip (no ``__pycache__``, numba caches or editor files), with
fixed timestamps, so the zip is the same bytes from a fresh clone and from a working tree.
"""

from __future__ import annotations

import argparse
import email.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ZIP_NAME = "pretrain_pipeline.zip"
REQUIREMENTS_NAME = "requirements-cluster.txt"
WHEELHOUSE_NAME = "wheelhouse"
# Provided by the cluster (Dataproc, EMR, Serverless): never installed there.
CLUSTER_PROVIDED = frozenset({"pyspark", "py4j"})
# glibc versions that have a manylinux tag (PEP 600), oldest first, and the legacy aliases of some.
MANYLINUX_GLIBC_MINORS = (5, 12, 17, 24, 26, 27, 28, 31, 34, 35, 39)
LEGACY_MANYLINUX = {5: "manylinux1", 12: "manylinux2010", 17: "manylinux2014"}
_SKIP_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache"})
_SKIP_SUFFIXES = (".pyc", ".pyo", ".nbi", ".nbc", ".so.tmp", "~", ".swp")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
NUMBA_CACHE_NAME = "numba-cache"  # <out>/numba-cache.tar.gz, unpacked on executors as ./numba-cache
NUMBA_BUILD_TIMEOUT = 1800
# What the build's interpreter reports for the manifest (pipeline/numba_cache.py), with the zip on its path.
_MANIFEST_PROBE = """
import json, os, sys
import llvmlite.binding as ll, numba
from pipeline.numba_cache import MANIFEST, package_digest
cpu = os.environ.get("NUMBA_CPU_NAME") or ll.get_host_cpu_name()
print(MANIFEST)
print(json.dumps({"digest": package_digest(), "python": "%d.%d" % sys.version_info[:2], "numba": numba.__version__,
                  "cpu_name": cpu, "machine": os.uname().machine}))
"""


class BuildError(RuntimeError):
    """A build step that cannot run here, with what to do about it."""


def package_files(root: Path = ROOT) -> list[Path]:
    """Files of the ``pipeline`` package to ship, sorted, relative to ``root``."""
    files = []
    for dirpath, dirnames, filenames in os.walk(root / "pipeline"):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or name.endswith(_SKIP_SUFFIXES):
                continue
            files.append((Path(dirpath) / name).relative_to(root))
    return sorted(files)


def build_zip(out_dir: str | Path, root: Path = ROOT) -> Path:
    """Write ``pretrain_pipeline.zip`` (``pipeline/...`` at the top level) and return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / ZIP_NAME
    tmp = target.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel in package_files(root):
            info = zipfile.ZipInfo(rel.as_posix(), date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, (root / rel).read_bytes())
    os.replace(tmp, target)
    return target


def build_wheel(out_dir: str | Path, root: Path = ROOT, python: str = sys.executable, isolation: bool = True) -> Path:
    """Build the wheel with ``python -m build --wheel`` from a clean copy of the sources.

    The copy keeps ``build/`` and ``*.egg-info`` out of the working tree. With ``isolation`` (the
    default) ``build`` installs the build backend named in pyproject.toml into a fresh environment,
    so the interpreter needs only ``build`` itself, not setuptools.
    """
    check = subprocess.run([python, "-c", "import build, packaging"], capture_output=True, text=True)
    if check.returncode != 0:
        raise BuildError(f"{python} cannot import PyPA 'build' (and 'packaging'): run `{python} -m pip install build`")
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pipeline-wheel-") as tmp:
        src, wheels = Path(tmp) / "src", Path(tmp) / "wheels"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(root / name, src / name)
        for rel in package_files(root):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, src / rel)
        cmd = [python, "-m", "build", "--wheel", "--outdir", str(wheels), str(src)]
        if not isolation:
            cmd.insert(4, "--no-isolation")
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(f"wheel build failed ({' '.join(cmd)}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
        (wheel,) = wheels.glob("*.whl")
        target = out / wheel.name
        shutil.move(str(wheel), target)
    return target


def wheel_requirements(wheel: str | Path, extras: Sequence[str] = ()) -> list[str]:
    """``Requires-Dist`` of a wheel, without cluster-provided packages and without extras-only entries
    unless their extra is in ``extras`` (e.g. ``web-trafilatura``); an extra the wheel lacks is an error."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode("utf-8"))
    provided = sorted(meta.get_all("Provides-Extra") or [])
    wanted = [canonicalize_name(e) for e in extras]
    unknown = [e for e, c in zip(extras, wanted, strict=True) if c not in map(canonicalize_name, provided)]
    if unknown:
        raise BuildError(f"--extra {unknown[0]}: the wheel has no such extra (it has: {', '.join(provided)})")
    keep = []
    for text in meta.get_all("Requires-Dist") or []:
        req = Requirement(text)
        marker = req.marker
        if marker is not None and "extra" in str(marker):
            if not any(marker.evaluate({"extra": e}) for e in wanted):
                continue  # only with an extra not asked for (test, bench)
            req.marker = None  # asked for: a plain requirement on the cluster
        if canonicalize_name(req.name) in CLUSTER_PROVIDED:
            continue
        keep.append(str(req))
    return keep


def manylinux_platforms(newest: str) -> list[str]:
    """Every manylinux tag a machine with ``newest``'s glibc accepts, newest first.

    ``pip download --platform`` matches only the tags it is given (it does not add older ones as an
    install does), and many packages publish only ``manylinux2014`` / ``manylinux_2_17`` wheels.
    """
    m = re.fullmatch(r"manylinux_2_(\d+)_(\w+)", newest)
    if not m:
        raise BuildError(
            f"--platform {newest!r}: expected manylinux_2_<glibc minor>_<arch>, e.g. manylinux_2_28_x86_64"
        )
    glibc, arch = int(m.group(1)), m.group(2)
    tags = []
    for minor in sorted((v for v in MANYLINUX_GLIBC_MINORS if v <= glibc), reverse=True):
        tags.append(f"manylinux_2_{minor}_{arch}")
        if minor in LEGACY_MANYLINUX:
            tags.append(f"{LEGACY_MANYLINUX[minor]}_{arch}")
    if f"manylinux_2_{glibc}_{arch}" not in tags:
        tags.insert(0, f"manylinux_2_{glibc}_{arch}")
    return tags


def pip_download_command(
    requirements: Path, dest: Path, target_python: str, platform: str, python: str = sys.executable
) -> list[str]:
    """``pip download`` of binary wheels only, for another interpreter and platform."""
    cmd = [
        python,
        "-m",
        "pip",
        "download",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        target_python,
        "--dest",
        str(dest),
        "-r",
        str(requirements),
    ]
    for tag in manylinux_platforms(platform):
        cmd += ["--platform", tag]
    return cmd


def build_wheelhouse(out_dir: Path, target_python: str, platform: str, python: str = sys.executable) -> Path:
    """Download every requirement as a wheel into ``<out>/wheelhouse`` beside the project's wheel."""
    dest = out_dir / WHEELHOUSE_NAME
    dest.mkdir(parents=True, exist_ok=True)
    cmd = pip_download_command(out_dir / REQUIREMENTS_NAME, dest, target_python, platform, python)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"wheelhouse for Python {target_python} / {platform} incomplete:\n{done.stderr[-4000:]}")
    for wheel in out_dir.glob("spark_pretrain_pipeline-*.whl"):
        shutil.copy2(wheel, dest / wheel.name)
    return dest


def _sample_config(directory: Path, root: Path = ROOT) -> Path:
    """conf/local.yaml on the bundled sample with absolute paths, one small driver, outputs in ``directory``."""
    import yaml

    raw = yaml.safe_load((root / "conf" / "local.yaml").read_text())
    for source in raw["sources"]:
        source["paths"] = [str(root / p) for p in source["paths"]]
    raw["output"] = str(directory / "run")
    raw["spark"]["settings"] = {
        **raw["spark"].get("settings", {}),
        "spark.driver.memory": "1g",
        "spark.ui.enabled": "false",
    }
    path = directory / "sample.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def build_numba_cache(
    out_dir: str | Path, python: str = sys.executable, cpu: str = "host", warmup: Sequence[str] | None = None
) -> Path:
    """``<out>/numba-cache.tar.gz``: every kernel a run calls, compiled by ``python`` into a shipped cache.

    Runs the whole pipeline on the bundled sample with local Spark, the package imported from the built zip
    and every kernel compiled from its first call (``PIPELINE_NUMBA_AFTER=0``), into ``<out>/numba-cache``
    with its manifest (pipeline/numba_cache.py). ``cpu``: ``host`` (this machine's CPU, which the cluster's must
    match), or a level every executor with its features compiles for too (``x86-64-v3``, ``generic``: any). ``warmup``
    replaces the sample run by another command (run in an empty directory, the zip on its path).
    """
    out = Path(out_dir).resolve()
    zip_path = out / ZIP_NAME
    if not zip_path.is_file():
        raise BuildError(f"{zip_path} not found: the numba cache is built from the zip")
    cache = out / NUMBA_CACHE_NAME
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PIPELINE_")) and k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(zip_path), PIPELINE_NUMBA_SHIPPED=str(cache), PIPELINE_NUMBA_AFTER="0")
    if cpu != "host":
        sys.path.insert(0, str(ROOT))  # run as a script, deploy/ is on the path but not the checkout
        from pipeline.numba_cache import CPU_LEVELS

        if cpu not in CPU_LEVELS:
            raise BuildError(f"--numba-cpu {cpu}: expected host or one of {', '.join(CPU_LEVELS)}")
        env.update(NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="")
    with tempfile.TemporaryDirectory(prefix="pipeline-numba-build-") as tmp:
        probe = subprocess.run([python, "-c", _MANIFEST_PROBE], cwd=tmp, env=env, capture_output=True, text=True)
        if probe.returncode != 0:
            raise BuildError(f"{python} cannot import numba and the built package:\n{probe.stderr[-2000:]}")
        name, text = probe.stdout.split("\n", 1)
        manifest = json.loads(text)
        (cache / name).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        cmd = list(warmup or [python, "-m", "pipeline", "run", "--config", str(_sample_config(Path(tmp)))])
        done = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=NUMBA_BUILD_TIMEOUT)
        if done.returncode != 0:
            raise BuildError(f"the run that compiles the kernels failed ({' '.join(cmd)}):\n{done.stderr[-4000:]}")
    kernels = list((cache / manifest["digest"][:16]).rglob("*.nbi"))
    if not kernels:
        raise BuildError(f"the run compiled no kernel into {cache}: is numba installed for {python}?")
    target = out / f"{NUMBA_CACHE_NAME}.tar.gz"
    with tarfile.open(target.with_suffix(".gz.tmp"), "w:gz") as tar:
        for path in sorted(cache.rglob("*")):
            tar.add(path, arcname=path.relative_to(cache).as_posix(), recursive=False)
    os.replace(target.with_suffix(".gz.tmp"), target)
    return target


def build_all(
    out_dir: str | Path, zip_only: bool = False, isolation: bool = True, extras: Sequence[str] = ()
) -> dict[str, Path]:
    """Zip, and unless ``zip_only`` the wheel and ``requirements-cluster.txt`` (with the ``extras``'
    dependencies); returns their paths."""
    built = {"zip": build_zip(out_dir)}
    if not zip_only:
        for old in Path(out_dir).glob("spark_pretrain_pipeline-*.whl"):
            old.unlink()
        wheel = build_wheel(out_dir, isolation=isolation)
        req = Path(out_dir) / REQUIREMENTS_NAME
        req.write_text(
            "# The wheel's dependencies minus what the cluster provides (pyspark)"
            + (f", with the extras {', '.join(extras)}" if extras else "")
            + ".\n"
            + "\n".join(wheel_requirements(wheel, extras))
            + "\n"
        )
        built.update(wheel=wheel, requirements=req)
    return built


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python deploy/build_artifacts.py [--out dist] [--zip-only] [--wheelhouse ...]``."""
    parser = argparse.ArgumentParser(prog="deploy/build_artifacts.py", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "dist"), help="output directory (default: dist/)")
    parser.add_argument("--zip-only", action="store_true", help="only the --py-files zip")
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="build the wheel with this interpreter's setuptools (no index access)",
    )
    parser.add_argument("--wheelhouse", action="store_true", help="also download every dependency as a wheel")
    parser.add_argument("--target-python", default="3.11", help="the cluster's Python (default 3.11)")
    parser.add_argument(
        "--platform",
        default="manylinux_2_28_x86_64",
        help="the cluster's newest manylinux tag; older ones are added (default glibc 2.28)",
    )
    parser.add_argument(
        "--extra",
        dest="extras",
        action="append",
        default=[],
        help="also install this extra's dependencies on the cluster (repeatable), e.g. web-trafilatura",
    )
    parser.add_argument(
        "--numba-cache",
        action="store_true",
        help="also compile the numba kernels into numba-cache.tar.gz (this interpreter and CPU: the cluster's)",
    )
    parser.add_argument(
        "--numba-cpu",
        default="host",
        help="with --numba-cache: host (this CPU, default), x86-64-v2/v3/v4 or generic (docs/running.md)",
    )
    parser.add_argument("--print-pip-command", action="store_true", help="print the pip download command only")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    try:
        if args.print_pip_command:
            cmd = pip_download_command(
                out / REQUIREMENTS_NAME, out / WHEELHOUSE_NAME, args.target_python, args.platform
            )
            print(" ".join(cmd))
            return 0
        if args.wheelhouse and args.zip_only:
            raise BuildError("--wheelhouse needs the wheel and requirements: drop --zip-only")
        if args.extras and args.zip_only:
            raise BuildError("--extra adds to requirements-cluster.txt, which --zip-only does not write")
        for kind, path in build_all(out, args.zip_only, not args.no_isolation, args.extras).items():
            print(f"{kind}: {path}")
        if args.numba_cache:
            print(f"numba cache: {build_numba_cache(out, cpu=args.numba_cpu)}")
        if args.wheelhouse:
            dest = build_wheelhouse(out, args.target_python, args.platform)
            print(f"wheelhouse: {dest} ({len(list(dest.glob('*.whl')))} wheels for Python {args.target_python})")
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
