"""deploy/build_artifacts.py: the zip holds only the pipeline package, the wheel is built by PyPA
``build`` and its requirements parsed by ``packaging``, and ``--wheelhouse`` resolves every dependency
for the cluster's Python offline (checked with pip itself, which needs the package index here)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from deploy.build_artifacts import (
    REQUIREMENTS_NAME,
    ZIP_NAME,
    build_all,
    main,
    manylinux_platforms,
    pip_download_command,
    wheel_requirements,
)

REPO = Path(__file__).resolve().parents[2]


def test_manylinux_platforms_include_every_older_tag():
    tags = manylinux_platforms("manylinux_2_28_x86_64")
    for tag in (
        "manylinux_2_28_x86_64",
        "manylinux_2_27_x86_64",
        "manylinux_2_24_x86_64",
        "manylinux_2_17_x86_64",
        "manylinux2014_x86_64",
        "manylinux2010_x86_64",
        "manylinux1_x86_64",
    ):
        assert tag in tags, tag
    assert not [t for t in tags if t.startswith(("manylinux_2_31", "manylinux_2_34"))]
    assert manylinux_platforms("manylinux_2_17_aarch64")[:2] == ["manylinux_2_17_aarch64", "manylinux2014_aarch64"]
    with pytest.raises(RuntimeError, match="manylinux_2_"):
        manylinux_platforms("linux_x86_64")
    cmd = pip_download_command(Path("r.txt"), Path("wh"), "3.12", "manylinux_2_28_x86_64")
    platforms = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--platform"]
    assert platforms == tags and "--only-binary=:all:" in cmd
    assert cmd[cmd.index("--python-version") + 1] == "3.12"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    return build_all(tmp_path_factory.mktemp("dist"))


def test_zip_holds_only_the_pipeline_package(built):
    names = zipfile.ZipFile(built["zip"]).namelist()
    assert built["zip"].name == ZIP_NAME
    assert "pipeline/__init__.py" in names and "pipeline/dedup/shingles_numba.py" in names
    assert all(n.startswith("pipeline/") for n in names), [n for n in names if not n.startswith("pipeline/")]
    assert not [n for n in names if "packaging" in n or "build_artifacts" in n or "__pycache__" in n]


def test_wheel_and_cluster_requirements(built):
    wheel = built["wheel"]
    assert wheel.name.startswith("spark_pretrain_pipeline-") and wheel.name.endswith("-py3-none-any.whl")
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.startswith(("deploy/", "tests/"))]
    lines = [ln for ln in built["requirements"].read_text().splitlines() if ln and not ln.startswith("#")]
    reqs = {Requirement(line).name: Requirement(line) for line in lines}
    assert "pyspark" not in reqs and "py4j" not in reqs  # the cluster provides Spark
    assert not {"pytest", "datasketch", "awscli", "psutil"} & set(reqs)  # extras never ship
    # numba 0.60 cannot import @njit(cache=True) modules from a zip on the executors' path.
    assert "0.60.0" not in reqs["numba"].specifier and "0.61.0" in reqs["numba"].specifier
    assert {"numpy", "pyarrow", "zstandard", "regex", "gcsfs"} <= set(reqs)


def test_an_extra_adds_its_dependencies_and_an_unknown_one_is_named(built):
    """``--extra web-trafilatura`` puts that extra's requirements (read from pyproject.toml here, not from
    the code under test) into the cluster's list, without their ``extra ==`` marker; others stay out."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    expected = {Requirement(r).name for r in project["optional-dependencies"]["web-trafilatura"]}
    plain = {Requirement(r).name for r in wheel_requirements(built["wheel"])}
    with_extra = [Requirement(r) for r in wheel_requirements(built["wheel"], ["web-trafilatura"])]
    assert expected and not expected & plain
    assert {r.name for r in with_extra} == plain | expected
    assert all(r.marker is None for r in with_extra if r.name in expected)
    with pytest.raises(RuntimeError, match="--extra nope: the wheel has no such extra .*web-trafilatura"):
        wheel_requirements(built["wheel"], ["nope"])
    assert main(["--out", str(built["zip"].parent), "--zip-only", "--extra", "web-trafilatura"]) == 1


def test_wheelhouse_resolves_every_requirement_offline(tmp_path):
    """The real thing: download the wheelhouse for Python 3.11 / glibc 2.28, then let pip resolve the
    requirements from it alone (--no-index) for that interpreter and platform."""
    out = tmp_path / "dist"
    done = subprocess.run(
        [
            "bash",
            str(REPO / "deploy" / "build_artifacts.sh"),
            "--python",
            sys.executable,
            "--out",
            str(out),
            "--wheelhouse",
            "--target-python",
            "3.11",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    wheelhouse = out / "wheelhouse"
    names = [p.name.lower() for p in wheelhouse.glob("*.whl")]
    for package in ("numba", "llvmlite", "pyarrow", "zstandard", "regex", "xxhash", "google_crc32c", "grpcio"):
        assert any(n.startswith(package + "-") for n in names), package
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--ignore-installed",
        "--no-index",
        "--find-links",
        str(wheelhouse),
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        "3.11",
        "--target",
        str(tmp_path / "target"),
        "-r",
        str(out / REQUIREMENTS_NAME),
    ]
    for tag in manylinux_platforms("manylinux_2_28_x86_64"):
        cmd += ["--platform", tag]
    resolved = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert resolved.returncode == 0, resolved.stderr[-4000:]
    assert "Would install" in resolved.stdout and "numba-" in resolved.stdout
    # The project's own wheel is there too (installed --no-deps after the requirements, as the init action does).
    assert len(list(wheelhouse.glob("spark_pretrain_pipeline-*.whl"))) == 1
