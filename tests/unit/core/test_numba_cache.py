"""numba's kernel cache on executors with an unwritable home (issue #16): a writable directory is chosen."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.oracles import require_oracle

REPO = Path(__file__).resolve().parents[3]
PROBE = "from pipeline.dedup.minhash import minhash_signatures; print(minhash_signatures(['a b c d e f'])[0][:2])"


def _zip_package(dest: Path) -> Path:
    """The package as a --py-files zip: its kernels have no writable __pycache__ next to them."""
    with zipfile.ZipFile(dest, "w") as zf:
        for path in (REPO / "pipeline").rglob("*.py"):
            zf.write(path, path.relative_to(REPO))
    return dest


def _run(tmp_path: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "SPARK_LOCAL_DIRS")}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        env={**base, "PYTHONPATH": str(_zip_package(tmp_path / "pipeline.zip")), **env},
    )


def test_unwritable_user_cache_moves_to_the_spark_local_dir(tmp_path):
    require_oracle("numba")
    local = tmp_path / "spark-local"
    done = _run(tmp_path, PROBE, XDG_CACHE_HOME="/dev/null/no-cache", SPARK_LOCAL_DIRS=f"{local},/elsewhere")
    assert done.returncode == 0, done.stderr[-2000:]
    assert list((local / "pipeline-numba-cache" / "numba").rglob("*.nbi")), "no kernel was cached there"


def test_writable_user_cache_and_explicit_setting_are_left_alone(tmp_path):
    code = (
        "import os; from pipeline.numba_cache import ensure_numba_cache_dir; "
        "print(ensure_numba_cache_dir(), os.environ.get('NUMBA_CACHE_DIR'))"
    )
    kept = _run(tmp_path, code, XDG_CACHE_HOME=str(tmp_path / "xdg"), SPARK_LOCAL_DIRS=str(tmp_path / "l"))
    assert kept.stdout.split() == ["None", "None"]
    explicit = _run(tmp_path, code, XDG_CACHE_HOME="/dev/null/x", NUMBA_CACHE_DIR=str(tmp_path / "mine"))
    assert explicit.stdout.split() == ["None", str(tmp_path / "mine")]
