"""Small Debian packages that tests build with dpkg-deb itself (corpora/mixed.py and corpora/constant.py
read their documents)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def build_deb(tmp_path: Path, files: dict[str, bytes], name: str = "docs-test") -> Path:
    """A package of ``files`` (paths under the root), version 1.0, its data xz-compressed, built by dpkg-deb."""
    root = tmp_path / f"{name}-root"
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    (root / "DEBIAN").mkdir(parents=True, exist_ok=True)
    control = f"Package: {name}\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n"
    (root / "DEBIAN" / "control").write_text(control)
    deb = tmp_path / f"{name}_1.0_all.deb"
    command = ["dpkg-deb", "-Zxz", "--root-owner-group", "--build", str(root), str(deb)]
    subprocess.run(command, check=True, capture_output=True)
    return deb
