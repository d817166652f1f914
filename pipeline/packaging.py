"""Build what spark-submit needs: ``pretrain_pipeline.zip`` for ``--py-files``, the wheel, and the
cluster's requirements (the wheel's dependencies without ``pyspark``, which the cluster provides).

``python -m pipeline.packaging --out dist`` (or ``deploy/build_artifacts.sh``) writes::

    dist/pretrain_pipeline.zip                 the pure-Python ``pipeline`` package (SPEC §11: --py-files)
    dist/spark_pretrain_pipeline-<v>-py3-none-any.whl
    dist/requirements-cluster.txt              for the init action / bootstrap / wheelhouse

Only the project's own sources go in: no ``__pycache__``, numba caches or editor files, so the zip
is the same from a fresh clone and from a working tree.
"""

from __future__ import annotations

import argparse
import email.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ZIP_NAME = "pretrain_pipeline.zip"
REQUIREMENTS_NAME = "requirements-cluster.txt"
# Provided by the cluster (Dataproc, EMR, Serverless): never installed there.
CLUSTER_PROVIDED = frozenset({"pyspark", "py4j"})
_SKIP_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache"})
_SKIP_SUFFIXES = (".pyc", ".pyo", ".nbi", ".nbc", ".so.tmp", "~", ".swp")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same sources give the same zip bytes


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


def build_wheel(out_dir: str | Path, root: Path = ROOT, python: str = sys.executable) -> Path:
    """Build the wheel from a clean copy of the sources (the working tree gets no ``build/``)."""
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pipeline-wheel-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(root / name, src / name)
        for rel in package_files(root):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, src / rel)
        # PEP 517 in-process with the running interpreter's setuptools: no network, no pip needed.
        code = ("import sys; from setuptools import build_meta; "
                "print(build_meta.build_wheel(sys.argv[1]))")
        done = subprocess.run([python, "-c", code, str(out)], cwd=src, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"wheel build failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
        name = done.stdout.strip().splitlines()[-1]
    return out / name


def wheel_requirements(wheel: str | Path) -> list[str]:
    """``Requires-Dist`` of a wheel without extras-only entries and cluster-provided packages."""
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode("utf-8"))
    keep = []
    for req in meta.get_all("Requires-Dist") or []:
        if ";" in req and "extra" in req.split(";", 1)[1]:
            continue
        name = re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0]
        if name.lower().replace("_", "-") in CLUSTER_PROVIDED:
            continue
        keep.append(req.strip())
    return keep


def build_all(out_dir: str | Path, zip_only: bool = False) -> dict[str, Path]:
    """Zip, and unless ``zip_only`` the wheel and ``requirements-cluster.txt``; returns their paths."""
    built = {"zip": build_zip(out_dir)}
    if not zip_only:
        wheel = build_wheel(out_dir)
        req = Path(out_dir) / REQUIREMENTS_NAME
        req.write_text("# The wheel's dependencies minus what the cluster provides (pyspark).\n"
                       + "\n".join(wheel_requirements(wheel)) + "\n")
        built.update(wheel=wheel, requirements=req)
    return built


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m pipeline.packaging [--out dist] [--zip-only]``."""
    parser = argparse.ArgumentParser(prog="python -m pipeline.packaging", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "dist"), help="output directory (default: dist/)")
    parser.add_argument("--zip-only", action="store_true", help="only the --py-files zip")
    args = parser.parse_args(argv)
    for kind, path in build_all(args.out, args.zip_only).items():
        print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
